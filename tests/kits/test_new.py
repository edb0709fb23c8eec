"""`arena new BOT_DIR --lang L` copies a starter kit: a fresh bot named after its directory,
without the build products a kit directory may hold; bad requests are one-line errors."""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from arena.kits import KITS, KitError, find_kit, new_bot
from arena.referee import load_bot

ROOT = Path(__file__).resolve().parents[2]


def arena(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_every_kit_is_listed_and_has_a_manifest_with_named_outputs():
    assert set(KITS) >= {"java", "go", "rust", "cpp", "typescript", "csharp"}
    for lang in ("java", "go", "rust", "cpp", "typescript", "csharp"):
        kit = KITS[lang]
        assert kit.directory == ROOT / "protocol" / "kits" / lang
        bot = load_bot(kit.directory)
        assert bot.build and bot.build_outputs, lang  # built once, not before every game
        readme = (kit.directory / "README.md").read_text(encoding="utf-8").splitlines()
        assert len(readme) <= 11, (lang, len(readme))  # "a ten-line README"


@pytest.mark.parametrize("lang", sorted(KITS))
def test_new_copies_the_kit_and_names_the_bot(tmp_path, lang):
    target = tmp_path / "my-bot"
    kit = new_bot(target, lang)
    bot = load_bot(target)
    assert bot.name == "my-bot"
    assert (target / "bot.toml").is_file()
    copied = {p.relative_to(target) for p in target.rglob("*") if p.is_file()}
    shipped = {p.relative_to(kit.directory) for p in kit.directory.rglob("*") if p.is_file()}
    assert copied <= shipped and Path("bot.toml") in copied
    # the name the program gives in `ready` follows, where the kit names itself in its source
    sources = [
        p.read_text(encoding="utf-8")
        for p in target.rglob("*")
        if p.is_file() and p.suffix != ".toml"
    ]
    assert not any(f'"{lang}-kit"' in text for text in sources)


def test_build_products_in_a_kit_directory_are_not_copied(tmp_path, monkeypatch):
    """A kit built in place (someone ran `arena check protocol/kits/go`) leaves its binary
    there: its .gitignore names it, and the copy leaves it out."""
    kit_dir = tmp_path / "kits" / "go"
    kit_dir.parent.mkdir()
    shutil.copytree(KITS["go"].directory, kit_dir)
    (kit_dir / "bot").write_bytes(b"\x7fELF stale binary")
    (kit_dir / ".arena-build.lock").write_text("")
    monkeypatch.setitem(KITS, "go", replace(KITS["go"], directory=kit_dir))
    new_bot(tmp_path / "fresh", "go")
    assert not (tmp_path / "fresh" / "bot").exists()
    assert not (tmp_path / "fresh" / ".arena-build.lock").exists()
    assert (tmp_path / "fresh" / "main.go").is_file()
    assert load_bot(tmp_path / "fresh").needs_build()


def test_an_empty_directory_is_fine(tmp_path):
    target = tmp_path / "empty"
    target.mkdir()
    new_bot(target, "java")
    assert load_bot(target).name == "empty"


@pytest.mark.parametrize("spelling, lang", [("C++", "cpp"), ("c#", "csharp"), ("ts", "typescript")])
def test_usual_spellings_are_understood(spelling, lang):
    assert find_kit(spelling).lang == lang


def test_an_unknown_language_lists_the_known_ones(tmp_path):
    with pytest.raises(KitError, match=r"unknown language 'kotlin' \(known: java, go, rust"):
        new_bot(tmp_path / "b", "kotlin")
    assert not (tmp_path / "b").exists()


def test_cli_errors_are_one_line(tmp_path):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.txt").write_text("mine\n")
    (tmp_path / "file").write_text("x")
    cases = [
        (("new", "b", "--lang", "cobol"), "unknown language 'cobol' (known: java, go, rust, cpp"),
        (("new", "taken", "--lang", "go"), "taken exists and is not empty"),
        (("new", "file", "--lang", "go"), "file exists and is not a directory"),
    ]
    for args, message in cases:
        result = arena(*args, cwd=tmp_path)
        assert result.returncode == 2, result
        assert result.stderr.startswith("arena: error: ") and message in result.stderr
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert (tmp_path / "taken" / "notes.txt").read_text() == "mine\n"  # untouched
    assert [p.name for p in (tmp_path / "taken").iterdir()] == ["notes.txt"]


def test_cli_creates_the_bot_and_says_what_next(tmp_path):
    result = arena("new", "bots/mine", "--lang", "rust", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "arena check bots/mine" in result.stdout
    assert load_bot(tmp_path / "bots" / "mine").name == "mine"
