"""How a bot is described: a `bot.toml` manifest, a directory holding one, or a command line.

Everything that asks for a bot (the CLI, tournament configs, `arena check`) goes through
`load_bot`, so the three spellings behave identically everywhere. A `BotSpec` is a plain frozen
value: it can be shared between concurrent games and turned into a `LaunchSpec` for any
isolation mode.

Two conveniences make bots portable between machines:
- `python`/`python3` as the first word of a command means the interpreter running the arena,
  so Python bots find the installed `protocol` package and `msgpack` whatever PATH says;
- the optional `build` step (e.g. compiling a C bot) runs before first use, and again when a
  file it names is newer than the bot's executable. A build that names its `outputs`
  (`[build]` table) is judged by those instead: it runs when one is missing or a source file is
  newer than the oldest of them, so a `javac -d classes` bot, whose output no argv word
  identifies, is not recompiled before every game. The names are untrusted input: relative
  paths inside the bot's directory only.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import shlex
import shutil
import stat
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from arena.errors import ArenaError
from arena.sandbox import ISOLATION_MODES, LaunchSpec, Limits, LimitsError
from protocol.framing import ENCODINGS

MANIFEST_NAME = "bot.toml"
_PYTHON_NAMES = ("python", "python3", f"python3.{sys.version_info.minor}")

_MANIFEST_KEYS = {
    "name": "the bot's name (required)",
    "command": "argv list or a command string (required)",
    "workdir": "working directory, relative to the manifest",
    "encoding": "msgpack or json",
    "version": "version string",
    "author": "author",
    "description": "free text",
    "language": "free text",
    "build": "argv list or string run before first use, or a table: command, outputs, sources",
    "isolation": "process or docker",
    "image": "docker image",
    "env": "table of extra environment variables",
    "limits": "table of resource limits",
}


class BotError(ArenaError):
    """A bot description that cannot be used: bad manifest, missing file, failed build."""


class BuildError(BotError):
    """The bot's build step failed; the message ends with the tail of the build output."""


@dataclass(frozen=True)
class BotSpec:
    """A bot, as described by its manifest or command line (paths resolved, values checked)."""

    name: str
    command: tuple[str, ...]
    workdir: Path
    encoding: str = "msgpack"
    version: str = ""
    author: str = ""
    isolation: str = "process"
    image: str | None = None
    #: what the bot asks for (`Limits.requested`): the referee caps it by the operator's
    #: limits, so a manifest can only lower them
    limits: Limits = field(default_factory=Limits.requested)
    source: str = ""
    build: tuple[str, ...] | None = None
    env: tuple[tuple[str, str], ...] = ()
    #: the manifest file, None for a plain command line (which then gets a fresh working
    #: directory of its own rather than the user's current directory)
    manifest: Path | None = None
    #: what the build produces (`[build] outputs`), relative to `workdir`; empty: guessed
    #: from the argv words as before
    build_outputs: tuple[str, ...] = ()
    #: what the build reads (`[build] sources`), relative to `workdir`; empty with outputs
    #: named: every file of `workdir` outside the outputs and hidden names
    build_sources: tuple[str, ...] = ()

    def launch_spec(
        self,
        *,
        isolation: str | None = None,
        cpu_affinity: tuple[int, ...] | None = None,
        ceiling: Limits | None = None,
    ) -> LaunchSpec:
        """The sandbox's view of this bot, its limits capped by the operator's `ceiling`
        (default: the built-in one). The environment is scrubbed: only the manifest's own
        `env` on top of the launcher's minimal PATH/HOME/LANG."""
        env = dict(self.env)
        mode = isolation or self.isolation
        return LaunchSpec(
            name=self.name,
            command=self.command,
            isolation=mode,
            workdir=self.workdir if self.manifest is not None else None,
            image=self.image,
            env=env,
            limits=self.limits.capped_by(ceiling or Limits()),
            cpu_affinity=cpu_affinity,
        )

    def executable_path(self) -> Path | None:
        """The file that identifies this bot's code: the first command word that is a file
        of the bot (its binary or script), else the program found on PATH."""
        first = self.command[0]
        for word in self.command[1:] if is_python_command(first) else self.command:
            if word.startswith("-"):
                continue
            p = Path(word) if os.path.isabs(word) else self.workdir / word
            if p.is_file():
                return p
            if word is first and "/" not in word:
                found = shutil.which(word)
                if found:
                    return Path(found)
        found = shutil.which(first)
        return Path(found) if found else None

    def executable_hash(self) -> str:
        """sha256 of the bot's executable (or script) if resolvable, else of the command.

        Called for every game: the file is found with one stat call on a string where
        possible (the same choice as `executable_path`), and its hash is remembered."""
        for candidate in _executable_candidates(self.command, str(self.workdir)):
            try:
                st = os.stat(candidate)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                return _file_sha256(candidate, st.st_dev, st.st_ino, st.st_size, st.st_ctime_ns)
            break  # not a plain file (a directory): `executable_path` looks further
        path = self.executable_path()
        if path is not None:
            try:
                st = path.stat()
                return _file_sha256(str(path), st.st_dev, st.st_ino, st.st_size, st.st_ctime_ns)
            except OSError:
                pass
        import hashlib  # here: its OpenSSL start-up is a cost of every arena command

        h = hashlib.sha256()
        h.update(shlex.join(self.command).encode())
        return "sha256:" + h.hexdigest()

    def needs_build(self) -> bool:
        """True when the build step must run: its output is missing or older than a file it
        names. Without an identifiable output, always (builds are assumed idempotent).

        Checked before every game (a few stat calls on strings: pathlib's objects made it a
        per-game cost of its own)."""
        if not self.build:
            return False
        if self.build_outputs:
            return _outputs_stale(
                str(self.workdir),
                self.build_outputs,
                self.build_sources,
                str(self.manifest) if self.manifest is not None else None,
            )
        output = self._build_output()
        if output is None:
            return True
        try:
            built = os.stat(output).st_mtime
        except OSError:
            return True
        for p in _build_inputs(self.build, str(self.workdir), output):
            try:
                st = os.stat(p)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and st.st_mtime > built:
                return True
        manifest = self.manifest
        return manifest is not None and os.stat(manifest).st_mtime > built

    def _build_output(self) -> str | None:
        """The command word the build produces (named in the build argv), else the command's
        own path if it has one."""
        assert self.build is not None
        return _build_output(self.command, self.build, str(self.workdir))

    def ensure_built(self, timeout: float = 300.0) -> None:
        """Run the build step if needed. Blocking: call it via `trio.to_thread.run_sync`.

        A lock file in the bot's directory serialises concurrent games that use the same bot,
        so that no game executes a binary while another game is rewriting it.
        """
        if not self.build or not self.needs_build():
            return
        lock_path = self.workdir / ".arena-build.lock"
        try:
            lock = lock_path.open("a")
        except OSError:
            lock = None  # read-only bot directory: build without the lock
        with lock if lock is not None else contextlib.nullcontext():
            if lock is not None:
                fcntl.flock(lock, fcntl.LOCK_EX)
            if not self.needs_build():  # another game built it while we waited
                return
            argv = list(self.build)
            if is_python_command(argv[0]):
                argv[0] = sys.executable
            try:
                proc = subprocess.run(
                    argv,
                    cwd=self.workdir,
                    capture_output=True,
                    timeout=timeout,
                    check=False,
                )
            except FileNotFoundError:
                raise BuildError(f"bot {self.name}: build command not found: {argv[0]}") from None
            except subprocess.TimeoutExpired:
                raise BuildError(f"bot {self.name}: build timed out after {timeout:g} s") from None
            if proc.returncode != 0:
                out = (proc.stderr or proc.stdout).decode(errors="replace").strip()
                tail = "\n".join(out.splitlines()[-10:])
                raise BuildError(
                    f"bot {self.name}: build `{shlex.join(self.build)}` failed with status "
                    f"{proc.returncode}" + (f":\n{tail}" if tail else "")
                )
            self.check_outputs()

    def check_outputs(self) -> None:
        """After a successful build: every named output must exist (a typo in `outputs`, or a
        build that wrote elsewhere, would otherwise rebuild before every game), and each is
        stamped now, so that a tool that left an up-to-date output untouched (`go build`,
        `make`) is not run again for the source that was merely touched."""
        assert self.build is not None
        for name in self.build_outputs:
            path = os.path.join(self.workdir, name)
            if not os.path.lexists(path):
                raise BuildError(
                    f"bot {self.name}: build `{shlex.join(self.build)}` succeeded but did not "
                    f"produce {name} (named in [build] outputs)"
                )
            with contextlib.suppress(OSError):
                os.utime(path)

    def describe(self) -> dict[str, Any]:
        """The bot as the game record stores it."""
        return {
            "name": self.name,
            "version": self.version,
            "author": self.author,
            "command": list(self.command),
            "source": self.source,
            "encoding": self.encoding,
            "isolation": self.isolation,
        }


@functools.lru_cache(maxsize=256)
def _executable_candidates(command: tuple[str, ...], workdir: str) -> tuple[str, ...]:
    """The first file `executable_path` would try, as a string (none for a program on
    PATH, which `executable_path` resolves itself)."""
    first = command[0]
    for word in command[1:] if is_python_command(first) else command:
        if word.startswith("-"):
            continue
        return (word if os.path.isabs(word) else os.path.join(workdir, word),)
    return ()


@functools.lru_cache(maxsize=256)
def _build_inputs(build: tuple[str, ...], workdir: str, output: str) -> tuple[str, ...]:
    """The paths of the build command's words other than its output (the files a rebuild
    is due for when one is newer than the output; most words name no file at all)."""
    paths = (os.path.normpath(os.path.join(workdir, word)) for word in build[1:])
    return tuple(p for p in paths if p != output)


@functools.lru_cache(maxsize=256)
def _build_output(command: tuple[str, ...], build: tuple[str, ...], workdir: str) -> str | None:
    built_names = {os.path.normpath(w) for w in build[1:]}
    for word in command:
        if os.path.normpath(word) in built_names:
            return os.path.normpath(os.path.join(workdir, word))
    first = command[0]
    if "/" in first and not is_python_command(first):
        return os.path.normpath(os.path.join(workdir, first))
    return None


def _outputs_stale(
    workdir: str, outputs: tuple[str, ...], sources: tuple[str, ...], manifest: str | None
) -> bool:
    """A build with named outputs is due when one is missing, or when a source (or the
    manifest) is newer than the oldest output. A directory's time is the newest of itself and
    everything in it: javac rewrites `classes/Bot.class` without touching `classes/`."""
    built: int | None = None
    for name in outputs:
        newest = _newest(os.path.join(workdir, name))
        if newest is None:
            return True
        built = newest if built is None else min(built, newest)
    assert built is not None
    skip = frozenset(os.path.join(workdir, name) for name in outputs)
    if sources:
        roots = [os.path.join(workdir, name) for name in sources]
    else:
        roots = [workdir]
    for root in roots:
        if _any_newer(root, built, skip):
            return True
    if manifest is not None:
        try:
            return os.stat(manifest).st_mtime_ns > built
        except OSError:
            return True
    return False


def _newest(path: str) -> int | None:
    """The newest mtime (ns) of `path` and, for a directory, of everything beneath it; None
    when it does not exist. Symbolic links are not followed."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    newest = st.st_mtime_ns
    if stat.S_ISDIR(st.st_mode):
        with contextlib.suppress(OSError), os.scandir(path) as entries:
            for entry in entries:
                inner = _newest(entry.path)
                if inner is not None and inner > newest:
                    newest = inner
    return newest


def _any_newer(path: str, built: int, skip: frozenset[str]) -> bool:
    """Whether a regular file at or beneath `path` (outputs and hidden names left out: a
    `.git`, the build lock) was modified after `built`. A missing source counts as nothing."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    if stat.S_ISREG(st.st_mode):
        return st.st_mtime_ns > built
    if not stat.S_ISDIR(st.st_mode):
        return False
    try:
        with os.scandir(path) as entries:
            for entry in entries:
                if entry.name.startswith(".") or entry.path in skip:
                    continue
                if _any_newer(entry.path, built, skip):
                    return True
    except OSError:
        return False
    return False


def is_python_command(word: str) -> bool:
    """Whether a command word runs a Python interpreter (its script is the bot's program)."""
    return os.path.basename(word) in _PYTHON_NAMES or word == sys.executable


def _python_command(argv: list[str]) -> tuple[str, ...]:
    if argv and argv[0] in _PYTHON_NAMES:
        argv = [sys.executable, *argv[1:]]
    return tuple(argv)


def load_bot(text_or_path: str | os.PathLike[str]) -> BotSpec:
    """A manifest path, a directory holding `bot.toml`, or a command line (`json:` prefix for
    the JSON Lines encoding)."""
    source = os.fspath(text_or_path)
    if not source.strip():
        raise BotError("empty bot description (expected a bot.toml, a directory or a command)")
    path = Path(source).expanduser()
    if path.is_dir():
        manifest = path / MANIFEST_NAME
        if manifest.is_file():
            return load_manifest(manifest, source=source)
        raise BotError(f"{source}: directory has no {MANIFEST_NAME}")
    if path.suffix == ".toml":
        if not path.is_file():
            raise BotError(f"{source}: no such manifest")
        return load_manifest(path, source=source)
    return bot_from_command(source)


def resolve_bot(entry: Mapping[str, Any]) -> BotSpec:
    """A bot entry as a tournament config or a game request carries it (`BotEntry.to_dict()`:
    `source`, and optionally `alias`, `args`, `env`, `build`) as the BotSpec that plays: the
    manifest with the entry's name, extra arguments and environment applied (and, for the
    league, `"build": false`: built already, at submission, never at play time)."""
    spec = load_bot(entry["source"])
    changes: dict[str, Any] = {}
    if entry.get("alias"):
        changes["name"] = entry["alias"]
    if entry.get("args"):
        changes["command"] = (*spec.command, *entry["args"])
    if entry.get("env"):
        changes["env"] = tuple(sorted({**dict(spec.env), **entry["env"]}.items()))
    if entry.get("build") is False:
        changes["build"] = None
    return replace(spec, **changes) if changes else spec


@functools.lru_cache(maxsize=256)
def _file_sha256(path: str, dev: int, ino: int, size: int, ctime_ns: int) -> str:
    """A file's sha256, remembered while its identity, size and mtime stay the same: every
    game of a tournament records its bots' hashes, and reading the file each time was a
    per-game cost. Any write to the file changes its ctime (which, unlike the mtime, cannot
    be set back), a replacement its inode."""
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return "sha256:" + h.hexdigest()


def bot_from_command(source: str) -> BotSpec:
    """A plain command line. Paths in it are resolved against the current directory so that
    the bot can run in a working directory of its own."""
    text = source.strip()
    encoding = "msgpack"
    for enc in ENCODINGS:
        if text.startswith(enc + ":"):
            encoding, text = enc, text[len(enc) + 1 :].strip()
            break
    try:
        argv = shlex.split(text)
    except ValueError as e:
        raise BotError(f"bot command {source!r}: {e}") from None
    if not argv:
        raise BotError(f"bot command {source!r} is empty")
    cwd = Path.cwd()
    resolved = []
    for i, word in enumerate(argv):
        p = cwd / word
        if (i == 0 and "/" in word) or (i > 0 and not word.startswith("-") and p.exists()):
            if i == 0 and not p.exists():
                raise BotError(f"bot command {source!r}: {word} does not exist")
            # absolute, but symlinks kept: a virtual environment's `bin/python` is a symlink
            # to the base interpreter, and resolving it would lose the environment
            resolved.append(os.path.normpath(p))
        else:
            resolved.append(word)
    if "/" not in argv[0] and argv[0] not in _PYTHON_NAMES and shutil.which(argv[0]) is None:
        raise BotError(f"bot command {source!r}: {argv[0]} not found on PATH")
    script = next((w for w in argv[1:] if not w.startswith("-") and (cwd / w).is_file()), None)
    if script is not None and (is_python_command(argv[0]) or "/" not in argv[0]):
        name = Path(script).stem
    else:
        name = Path(argv[0]).name
    return BotSpec(
        name=name,
        command=_python_command(resolved),
        workdir=cwd,
        encoding=encoding,
        source=source,
        # written by the operator, not a bot author: it gets the operator's limits as they are
        limits=Limits.requested(network=True),
    )


def load_manifest(path: Path, source: str | None = None) -> BotSpec:
    """Parse and check a `bot.toml`; every error names the file and the key."""
    import tomllib  # here: only a bot with a manifest needs it

    path = path.resolve()
    where = str(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise BotError(f"{where}: cannot read: {e.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise BotError(f"{where}: invalid TOML: {e}") from None

    unknown = sorted(set(data) - set(_MANIFEST_KEYS))
    if unknown:
        raise BotError(
            f"{where}: unknown key {unknown[0]!r} (valid keys: {', '.join(_MANIFEST_KEYS)})"
        )

    def string(key: str, default: str | None = None) -> str:
        if key not in data:
            if default is None:
                raise BotError(f"{where}: missing required key {key!r}")
            return default
        value = data[key]
        if not isinstance(value, str):
            raise BotError(f"{where}: {key} must be a string, got {value!r}")
        return value

    def argv(key: str, table: dict[str, Any] = data) -> tuple[str, ...] | None:
        if key not in table:
            return None
        value = table[key]
        if isinstance(value, str):
            try:
                words = shlex.split(value)
            except ValueError as e:
                raise BotError(f"{where}: {key}: {e}") from None
        elif isinstance(value, list) and all(isinstance(w, str) for w in value):
            words = list(value)
        else:
            raise BotError(f"{where}: {key} must be a list of strings or a string")
        if not words:
            raise BotError(f"{where}: {key} is empty")
        return tuple(words)

    name = string("name").strip()
    if not name:
        raise BotError(f"{where}: name must not be empty")
    command = argv("command")
    if command is None:
        raise BotError(f"{where}: missing required key 'command'")
    workdir = (path.parent / string("workdir", ".")).resolve()
    if not workdir.is_dir():
        raise BotError(f"{where}: workdir {workdir} is not a directory")
    encoding = string("encoding", "msgpack")
    if encoding not in ENCODINGS:
        raise BotError(f"{where}: encoding must be one of {', '.join(ENCODINGS)}, got {encoding!r}")
    isolation = string("isolation", "process")
    if isolation not in ISOLATION_MODES:
        raise BotError(
            f"{where}: isolation must be one of {', '.join(ISOLATION_MODES)}, got {isolation!r}"
        )
    image = data.get("image")
    if image is not None and not isinstance(image, str):
        raise BotError(f"{where}: image must be a string")
    if isolation == "docker" and not image:
        raise BotError(f'{where}: isolation = "docker" needs an image')

    env_table = data.get("env", {})
    if not isinstance(env_table, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in env_table.items()
    ):
        raise BotError(f"{where}: env must be a table of strings")

    limits = _limits(where, data.get("limits", {}))
    build, outputs, sources = _build(where, data.get("build"), argv)
    return BotSpec(
        name=name,
        command=_python_command(list(command)),
        workdir=workdir,
        encoding=encoding,
        version=string("version", ""),
        author=string("author", ""),
        isolation=isolation,
        image=image,
        limits=limits,
        source=source if source is not None else str(path),
        build=build,
        env=tuple(sorted(env_table.items())),
        manifest=path,
        build_outputs=outputs,
        build_sources=sources,
    )


_BUILD_KEYS = ("command", "outputs", "sources")


def _build(
    where: str, value: Any, argv: Any
) -> tuple[tuple[str, ...] | None, tuple[str, ...], tuple[str, ...]]:
    """`build` as an argv (list or string), or as a table naming what it makes and reads:
    the command, its outputs and its sources (paths relative to the working directory)."""
    if value is None:
        return None, (), ()
    if not isinstance(value, dict):
        return argv("build"), (), ()
    unknown = sorted(set(value) - set(_BUILD_KEYS))
    if unknown:
        raise BotError(
            f"{where}: unknown key build.{unknown[0]} (valid keys: {', '.join(_BUILD_KEYS)})"
        )
    command = argv("command", value)
    if command is None:
        raise BotError(f"{where}: [build] needs a command")
    outputs = _bot_paths(where, "build.outputs", value.get("outputs"))
    if "outputs" in value and not outputs:
        raise BotError(f"{where}: build.outputs is empty (name what the build produces)")
    sources = _bot_paths(where, "build.sources", value.get("sources"))
    if sources and not outputs:
        raise BotError(f"{where}: build.sources needs build.outputs (what they are newer than)")
    return command, outputs, sources


def _bot_paths(where: str, key: str, value: Any) -> tuple[str, ...]:
    """Paths a manifest names inside its bot's directory: relative, without `..` leading out,
    not the directory itself. Checked on the words alone: nothing needs to exist yet."""
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise BotError(f"{where}: {key} must be a list of relative paths (strings)")
    paths = []
    for word in value:
        if not word or "\0" in word:
            raise BotError(f"{where}: {key}: {word!r} is not a path")
        if os.path.isabs(word) or word.startswith("~"):
            raise BotError(
                f"{where}: {key}: {word!r} is absolute; name a path inside the bot's directory"
            )
        norm = os.path.normpath(word)
        if norm == ".":
            raise BotError(
                f"{where}: {key}: {word!r} is the bot's directory itself; name a file or a "
                "directory inside it"
            )
        if norm == ".." or norm.startswith("../"):
            raise BotError(f"{where}: {key}: {word!r} leads outside the bot's directory")
        paths.append(norm)
    return tuple(paths)


def _limits(where: str, table: Any) -> Limits:
    """The manifest's request; the operator's limits cap it when the bot is started."""
    try:
        return Limits.requested().with_values(table)
    except LimitsError as e:
        raise BotError(f"{where}: {e}") from None
