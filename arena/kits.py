"""Starter kits: a small complete bot per language that `arena new DIR --lang L` copies.

A bot author's first hour should go to the game, not to the framing: each kit reads and
writes the protocol, asks for the legal actions, offers sessions, flushes every message and
builds through its `bot.toml` (a `[build]` table naming its outputs, so it is compiled once,
not before every game). The kits live with the protocol (`protocol/kits/<lang>/`) and travel
inside the package as `arena/_kits/` (see arena/resources.py), so an installed arena can
start a bot anywhere.

Each kit uses its language's standard library and what Debian packages, never a package
registry at build time: a league builds submissions without a network, and a kit must build
there as it is. Where the language has no msgpack library at hand the kit speaks JSON Lines,
the protocol's other encoding.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from arena.errors import ArenaError
from arena.resources import KITS_DIR, SPARRING_BOT


@dataclass(frozen=True)
class Kit:
    """One language's starter bot: where it lives and what it needs (for `arena new` and the
    docs' "Pick a kit" table)."""

    lang: str
    language: str
    toolchain: str  # the Debian packages that build and run it
    encoding: str
    directory: Path


KITS = {
    kit.lang: kit
    for kit in (
        Kit("java", "Java", "default-jdk-headless", "json", KITS_DIR / "java"),
        Kit("go", "Go", "golang-go", "json", KITS_DIR / "go"),
        Kit("rust", "Rust", "rustc, cargo", "json", KITS_DIR / "rust"),
        Kit("cpp", "C++", "g++, nlohmann-json3-dev", "msgpack", KITS_DIR / "cpp"),
        Kit("typescript", "TypeScript (Node)", "nodejs, node-typescript", "json",
            KITS_DIR / "typescript"),
        Kit("csharp", "C# (Mono)", "mono-mcs, mono-runtime", "json", KITS_DIR / "csharp"),
        Kit("python", "Python (arena SDK)", "python3", "msgpack", SPARRING_BOT),
    )
}  # fmt: skip

#: other spellings people type
ALIASES = {"c++": "cpp", "c#": "csharp", "cs": "csharp", "ts": "typescript", "golang": "go",
           "py": "python"}  # fmt: skip

_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


class KitError(ArenaError):
    """`arena new` cannot do what was asked: an unknown language, a directory in the way."""


def find_kit(lang: str) -> Kit:
    key = ALIASES.get(lang.lower(), lang.lower())
    if key not in KITS:
        raise KitError(f"unknown language {lang!r} (known: {', '.join(KITS)})")
    return KITS[key]


def new_bot(target: Path, lang: str) -> Kit:
    """Copy the kit for `lang` into `target` (absent or an empty directory) and name the bot
    after the directory. Build products a kit directory may hold (its `.gitignore` names
    them) are not copied."""
    kit = find_kit(lang)
    if target.exists() or target.is_symlink():
        if not target.is_dir():
            raise KitError(f"{target} exists and is not a directory")
        if any(target.iterdir()):
            raise KitError(f"{target} exists and is not empty; name a new or empty directory")
    if not (kit.directory / "bot.toml").is_file():
        raise KitError(f"the {kit.lang} kit is missing from this installation ({kit.directory})")
    skipped = _build_products(kit.directory)
    shutil.copytree(
        kit.directory,
        target,
        dirs_exist_ok=True,
        ignore=lambda where, names: [
            n for n in names if n in skipped or n in ("__pycache__", ".arena-build.lock")
        ],
    )
    _rename(target, target.resolve().name)
    return kit


def _build_products(kit_dir: Path) -> set[str]:
    """The names a kit's `.gitignore` lists (plain names, `dir/`): what a build left there."""
    ignore = kit_dir / ".gitignore"
    if not ignore.is_file():
        return set()
    return {
        line.strip().rstrip("/")
        for line in ignore.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    }


def _rename(bot_dir: Path, name: str) -> None:
    """The manifest's `name` becomes the directory's name; where it is a plain word, the name
    the program gives in `ready` too (a string literal of its source)."""
    manifest = bot_dir / "bot.toml"
    text = manifest.read_text(encoding="utf-8")
    old = re.search(r'^name = "([^"]*)"$', text, re.M)
    if old is None:
        return
    manifest.write_text(
        text[: old.start()] + f"name = {json.dumps(name)}" + text[old.end() :], encoding="utf-8"
    )
    if not _SAFE_NAME.fullmatch(name):
        return
    quoted_old, quoted_new = f'"{old.group(1)}"', f'"{name}"'
    for path in bot_dir.rglob("*"):
        if path.is_file() and path.name != "bot.toml" and path.stat().st_size < 1 << 20:
            try:
                source = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue
            if quoted_old in source:
                path.write_text(source.replace(quoted_old, quoted_new), encoding="utf-8")
