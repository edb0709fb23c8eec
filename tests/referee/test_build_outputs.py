"""Builds that name their outputs (`[build] outputs`, docs/bots.md): an unchanged bot is not
rebuilt, a touched source or a missing output rebuilds it, and the names are checked like any
untrusted input. A bot directory whose build counts its runs makes "rebuilt" observable."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.referee import BotError, BuildError, load_bot
from arena.referee.build import build_bot

#: a javac-like build: it writes into a directory that the command names nowhere as a file,
#: and appends a line to `runs` (outside the outputs) every time it runs
COUNTING_BUILD = "mkdir -p classes && cat src/*.txt > classes/Bot.class && echo run >> runs"


def make_bot(top: Path, outputs: object = ("classes",), sources: object = None) -> Path:
    d = top / "bot"
    (d / "src").mkdir(parents=True, exist_ok=True)
    (d / "src" / "Bot.txt").write_text("v1\n")
    (d / "src" / "Util.txt").write_text("u1\n")
    table = {"command": ["sh", "-c", COUNTING_BUILD], "outputs": outputs}
    if sources is not None:
        table["sources"] = sources
    lines = [
        f"{key} = {json.dumps(list(v) if isinstance(v, tuple) else v)}" for key, v in table.items()
    ]
    (d / "bot.toml").write_text(
        'name = "counted"\ncommand = ["java", "-cp", "classes", "Bot"]\n[build]\n'
        + "\n".join(lines)
        + "\n"
    )
    return d


def runs(d: Path) -> int:
    path = d / "runs"
    return len(path.read_text().splitlines()) if path.exists() else 0


def age(path: Path, seconds: float = 100.0) -> None:
    """Set `path` (and, for a directory, everything in it) `seconds` into the past."""
    old = time.time() - seconds
    for p in [path, *path.rglob("*")] if path.is_dir() else [path]:
        os.utime(p, (old, old))


def settled(d: Path) -> None:
    """As if the last build was long ago: sources 200 s old, the outputs 100 s."""
    age(d, 200)
    age(d / "classes", 100)


def test_an_unchanged_bot_is_built_once(tmp_path):
    d = make_bot(tmp_path)
    bot = load_bot(d)
    assert bot.build_outputs == ("classes",)
    for _ in range(3):
        load_bot(d).ensure_built()
    assert runs(d) == 1
    assert not bot.needs_build()


def test_an_output_rewritten_in_place_still_counts_as_fresh(tmp_path):
    """javac rewrites classes/Bot.class, leaving the directory's own mtime as it was: the
    directory's time is the newest of its contents, so one edit does not mean a rebuild
    before every game ever after."""
    d = make_bot(tmp_path)
    bot = load_bot(d)
    bot.ensure_built()
    settled(d)
    age(d / "src" / "Bot.txt", 200)
    os.utime(d / "classes" / "Bot.class")  # rewritten now; classes/ itself stays old
    assert not bot.needs_build()


def test_a_touched_source_rebuilds(tmp_path):
    d = make_bot(tmp_path)
    bot = load_bot(d)
    bot.ensure_built()
    settled(d)
    (d / "src" / "Util.txt").write_text("u2\n")  # a file no argv word names
    assert bot.needs_build()
    bot.ensure_built()
    assert runs(d) == 2
    assert (d / "classes" / "Bot.class").read_text() == "v1\nu2\n"
    assert not bot.needs_build()


def test_a_new_source_file_rebuilds(tmp_path):
    d = make_bot(tmp_path)
    bot = load_bot(d)
    bot.ensure_built()
    settled(d)
    (d / "src" / "New.txt").write_text("n\n")
    assert bot.needs_build()


def test_hidden_files_are_not_sources(tmp_path):
    d = make_bot(tmp_path)
    bot = load_bot(d)
    bot.ensure_built()
    settled(d)
    (d / ".git").mkdir()
    (d / ".git" / "index").write_text("x")
    (d / ".arena-build.lock").write_text("")
    assert not bot.needs_build()


def test_an_edited_manifest_rebuilds(tmp_path):
    d = make_bot(tmp_path)
    load_bot(d).ensure_built()
    settled(d)
    bot = load_bot(d)
    assert not bot.needs_build()
    os.utime(d / "bot.toml")
    assert bot.needs_build()


@pytest.mark.parametrize("missing", ["classes/Bot.class", "classes"])
def test_a_missing_output_rebuilds(tmp_path, missing):
    d = make_bot(tmp_path, outputs=["classes/Bot.class", "runs"])
    bot = load_bot(d)
    bot.ensure_built()
    assert not bot.needs_build()
    target = d / missing
    shutil.rmtree(target) if target.is_dir() else target.unlink()
    assert bot.needs_build()
    bot.ensure_built()
    assert runs(d) == 2
    assert not bot.needs_build()


def test_the_oldest_output_decides(tmp_path):
    d = make_bot(tmp_path, outputs=["classes", "runs"])
    bot = load_bot(d)
    bot.ensure_built()
    age(d / "src", 50)
    age(d / "runs", 100)  # one output older than the sources: the build is stale
    assert bot.needs_build()


def test_named_sources_narrow_what_is_watched(tmp_path):
    d = make_bot(tmp_path, sources=["src/Bot.txt"])
    bot = load_bot(d)
    assert bot.build_sources == ("src/Bot.txt",)
    bot.ensure_built()
    settled(d)
    (d / "notes.md").write_text("not a source\n")
    (d / "src" / "Util.txt").write_text("u2\n")  # not named: ignored
    assert not bot.needs_build()
    os.utime(d / "src" / "Bot.txt")
    assert bot.needs_build()


def test_a_build_that_does_not_make_its_output_is_named(tmp_path):
    d = make_bot(tmp_path, outputs=["classes", "target/bot"])
    named = r"did not produce target/bot \(named in \[build\] outputs\)"
    with pytest.raises(BuildError, match=named):
        load_bot(d).ensure_built()


def test_an_up_to_date_tool_does_not_run_again(tmp_path):
    """A tool that leaves an up-to-date output alone (make, go build) after a mere touch of a
    source: the output is stamped after the successful build, so the next game does not
    build again."""
    d = tmp_path / "bot"
    d.mkdir()
    (d / "bot.toml").write_text(
        'name = "lazy"\ncommand = ["./out"]\n[build]\n'
        'command = ["sh", "-c", "echo run >> .runs; [ -e out ] || cp src out"]\n'
        'outputs = ["out"]\n'
    )
    (d / "src").write_text("#!/bin/sh\n")
    bot = load_bot(d)
    bot.ensure_built()
    age(d / "out")
    os.utime(d / "src")
    assert bot.needs_build()
    bot.ensure_built()
    assert not bot.needs_build()
    bot.ensure_built()
    assert (d / ".runs").read_text().count("run") == 2


BAD_OUTPUTS = [
    ('"classes"', "must be a list of relative paths"),
    ("[1]", "must be a list of relative paths"),
    ("[]", "build.outputs is empty"),
    ('["/usr/bin/java"]', "'/usr/bin/java' is absolute"),
    ('["~/bin"]', "'~/bin' is absolute"),
    ('["../elsewhere"]', "'../elsewhere' leads outside the bot's directory"),
    ('["a/../../b"]', "'a/../../b' leads outside the bot's directory"),
    ('["."]', "'.' is the bot's directory itself"),
    ('["a/.."]', "'a/..' is the bot's directory itself"),
    ('[""]', "'' is not a path"),
]


@pytest.mark.parametrize("value, message", BAD_OUTPUTS)
def test_bad_outputs_are_named(tmp_path, value, message):
    (tmp_path / "bot.toml").write_text(
        f'name = "b"\ncommand = ["./b"]\n[build]\ncommand = ["true"]\noutputs = {value}\n'
    )
    with pytest.raises(BotError) as err:
        load_bot(tmp_path)
    text = str(err.value)
    assert message in text and "bot.toml" in text and "\n" not in text


@pytest.mark.parametrize(
    "table, message",
    [
        ('outputs = ["x"]', "[build] needs a command"),
        ('command = ["true"]\noutput = ["x"]', "unknown key build.output"),
        ('command = ["true"]\nsources = ["x"]', "build.sources needs build.outputs"),
        ('command = ["true"]\noutputs = ["x"]\nsources = ["/etc"]', "'/etc' is absolute"),
        ("command = 3", "command must be a list of strings or a string"),
    ],
)
def test_bad_build_tables_are_named(tmp_path, table, message):
    (tmp_path / "bot.toml").write_text(f'name = "b"\ncommand = ["./b"]\n[build]\n{table}\n')
    with pytest.raises(BotError) as err:
        load_bot(tmp_path)
    assert message in str(err.value)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.text(alphabet="ab./", min_size=1, max_size=8),
        min_size=1,
        max_size=3,
    )
)
def test_accepted_outputs_stay_inside_the_bot(words):
    """Whatever path words a manifest holds, an accepted output lies inside the bot's
    directory (and is not the directory itself)."""
    top = Path(tempfile.mkdtemp())
    try:
        (top / "bot.toml").write_text(
            'name = "b"\ncommand = ["./b"]\n[build]\ncommand = ["true"]\n'
            f"outputs = {json.dumps(words)}\n"
        )
        try:
            bot = load_bot(top)
        except BotError:
            return
        for name in bot.build_outputs:
            full = (bot.workdir / name).resolve()
            assert full.is_relative_to(bot.workdir) and full != bot.workdir
    finally:
        shutil.rmtree(top)


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A directory every uid can reach, as a league's unpacked bots are (see test_build.py)."""
    top = Path(tempfile.mkdtemp(prefix="arena-build-test-"))
    top.chmod(0o755)
    yield top
    shutil.rmtree(top, ignore_errors=True)


async def test_the_sandboxed_build_honours_the_outputs(open_dir):
    d = make_bot(open_dir)
    for p in [d, *d.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    bot = load_bot(d)
    assert await build_bot(bot) is not None
    assert await build_bot(bot) is None  # unchanged: nothing to do
    assert runs(d) == 1
    settled(d)
    (d / "src" / "Bot.txt").write_text("v2\n")
    assert await build_bot(bot) is not None
    assert runs(d) == 2


async def test_the_sandboxed_build_names_a_missing_output(open_dir):
    d = make_bot(open_dir, outputs=["nothing-here"])
    with pytest.raises(BuildError, match="did not produce nothing-here"):
        await build_bot(load_bot(d))
