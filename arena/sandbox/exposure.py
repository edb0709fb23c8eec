"""Which of a bot's own files its uid cannot reach, and how to show them to it.

A bot runs under a uid of its own, which may not traverse the directories its files sit in
(an interpreter under /root, a 0700 pytest tmp dir). The launcher walks the bot's paths at
every start (`unreachable_paths`: exact, so a directory made unreachable between two games is
seen at the next start) and, with a mount namespace, covers each blocked directory with an
empty tmpfs that binds back only the entries on the way (`exposures_for`); where that is not
enough the bot keeps the arena's uid, and the launcher says so. `check_files` refuses a spec
whose working directory or program is missing: the bot's fault, reported before anything
starts.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from arena.sandbox.base import DEFAULT_PATH, LaunchError, LaunchSpec
from arena.sandbox.confine import Exposure


def _first_blocked(
    path: Path | str, uid: int, gid: int, stats: dict[str, os.stat_result | None] | None = None
) -> Path | None:
    """The first component on the way to `path` (or `path` itself) that `uid` cannot
    traverse, list or read; None if it can reach all of it. The path as named and as
    resolved: a symlink (a virtual environment's interpreter) is reached through both.

    Strings and `os.stat` (every bot start walks its paths: pathlib cost more than the system
    calls); `stats` shares the stat of a component between the paths of one start."""
    if stats is None:
        stats = {}
    named = os.path.abspath(path)
    for leaf in dict.fromkeys([named, os.path.realpath(named)]):
        parts = leaf.split("/")
        for i in range(1, len(parts) + 1):
            p = "/".join(parts[:i]) or "/"
            if i < len(parts) and not parts[i]:
                continue  # the root's own empty name
            if p not in stats:
                try:
                    stats[p] = os.stat(p)
                except OSError:
                    stats[p] = None
            if _mode_blocks(stats[p], p == leaf, uid, gid):
                return Path(p)
    return None


def _mode_blocks(st: os.stat_result | None, is_leaf: bool, uid: int, gid: int) -> bool:
    """Do these mode bits (of a path's leaf or of a directory on its way) stop `uid`?"""
    if st is None:
        return True
    if is_leaf and not stat.S_ISDIR(st.st_mode):
        need = stat.S_IROTH
    else:
        need = stat.S_IXOTH | (stat.S_IROTH if is_leaf else 0)
    if st.st_uid == uid:
        need <<= 6
    elif st.st_gid == gid:
        need <<= 3
    return st.st_mode & need != need


def _component_blocked(p: Path, leaf: Path, uid: int, gid: int) -> bool:
    """Do p's own mode bits stop `uid` on its way to `leaf` (p is leaf or an ancestor)?"""
    try:
        st: os.stat_result | None = os.stat(p)
    except OSError:
        st = None
    return _mode_blocks(st, p == leaf, uid, gid)


def exposures_for(paths: list[Path], uid: int) -> tuple[Exposure, ...] | None:
    """How to make `paths` reachable by `uid` in its mount namespace without touching the
    machine: for each directory it cannot traverse (say /root, 0700, holding a pyenv
    interpreter), cover that directory with an empty tmpfs and bind back only the entries
    on the way to the paths (/root/.pyenv). None if that is not enough (a blocked directory
    below the entry, a file it cannot read): the caller then keeps the arena's uid.

    Each path counts as named and as resolved: a virtual environment's interpreter is a
    symlink to the base interpreter, and Python finds the environment (its `pyvenv.cfg`,
    its site-packages) beside the name it was started by, so both must be reachable."""
    covers: dict[Path, set[str]] = {}
    named = [Path(os.path.abspath(p)) for p in paths]
    for path in dict.fromkeys([*named, *(p.resolve() for p in named)]):
        for _ in range(8):  # each round covers one directory more, a cover at a time
            blocked = _first_blocked_under(path, uid, covers)
            if blocked is None:
                break
            if blocked == path or not blocked.is_dir():
                return None  # the path itself is unreadable: nothing to expose
            entry = path.relative_to(blocked).parts[0]
            covers.setdefault(blocked, set()).add(entry)
        else:
            return None
    # parents first: a cover inside another cover's entry must be mounted after it
    return tuple(
        Exposure(str(d), tuple(sorted(names)))
        for d, names in sorted(covers.items(), key=lambda kv: len(kv[0].parts))
    )


def _first_blocked_under(path: Path, uid: int, covers: dict[Path, set[str]]) -> Path | None:
    """Like _first_blocked, but a covered directory is traversable (its tmpfs is 0755) on
    the way to one of its exposed entries, and only there."""
    for p in [*reversed(path.parents), path]:
        names = covers.get(p)
        if names is not None:
            rest = path.relative_to(p).parts
            if rest and rest[0] in names:
                continue
            return p
        if _component_blocked(p, path, uid, uid):
            return p
    return None


def describe_exposures(exposures: tuple[Exposure, ...]) -> list[str]:
    return [f"{os.path.join(e.directory, n)}" for e in exposures for n in e.names]


def unreachable_paths(spec: LaunchSpec, workdir: Path | None, uid: int) -> list[Path]:
    """The bot's own files (workdir, program, command words naming existing files) that `uid`
    could not reach. The program counts although setpriv could exec it anyway: an interpreter
    under /root (pyenv) would start but could not read its own library as another uid.

    Walked at every start (a few stat calls on strings, each component once): exact, so a
    bot's directory made unreachable between two games is seen at the next start."""
    wd = str(workdir) if workdir is not None else None
    paths = [wd] if wd is not None else []
    prog = spec.command[0]
    if "/" in prog:
        exe: str | None = prog if os.path.isabs(prog) or wd is None else os.path.join(wd, prog)
    else:
        exe = shutil.which(prog, path=spec.env.get("PATH", DEFAULT_PATH))
    if exe is not None and os.path.exists(exe):
        paths.append(exe)  # _first_blocked also walks its resolved path
    for word in spec.command[1:]:
        if "/" in word and not word.startswith("-"):
            p = word if os.path.isabs(word) or wd is None else os.path.join(wd, word)
            if os.path.exists(p):
                paths.append(p)
    stats: dict[str, os.stat_result | None] = {}
    return [Path(p) for p in paths if _first_blocked(p, uid, uid, stats) is not None]


def check_files(spec: LaunchSpec) -> Path | None:
    """The bot's working directory (None: none of its own), after checking that it and the
    program exist: a missing one is the bot's fault, reported before anything starts."""
    workdir = Path(spec.workdir) if spec.workdir is not None else None
    if workdir is not None and not os.path.isdir(workdir):
        raise LaunchError(f"bot {spec.name}: working directory {workdir} does not exist")
    _check_executable(spec, workdir)
    return workdir


def _check_executable(spec: LaunchSpec, workdir: Path | None) -> None:
    """A missing program is the bot's fault, reported before anything is started."""
    prog = spec.command[0]
    if "/" in prog:
        path = prog
        if not os.path.isabs(path):
            if workdir is None:
                raise LaunchError(f"bot {spec.name}: relative command {prog} needs a workdir")
            path = os.path.join(workdir, path)
        if not os.path.isfile(path):
            raise LaunchError(f"bot {spec.name}: cannot start {prog}: no such file")
        if not os.access(path, os.X_OK):
            raise LaunchError(f"bot {spec.name}: cannot start {prog}: not executable")
    elif shutil.which(prog, path=spec.env.get("PATH", DEFAULT_PATH)) is None:
        raise LaunchError(f"bot {spec.name}: cannot start {prog}: not found in PATH")
