"""Every starter kit, copied by `arena new`, builds with its language's toolchain, passes
`arena check` and plays a tournament with sessions (`reuse = true`) against the bundled bots
in all five games: real compilers, real processes, real games.

A kit whose toolchain is missing skips here and says which Debian packages give it; in CI
(where .ci/setup-system installs them) that skip is a failure (tests/conftest.py)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.kits import KITS, new_bot
from arena.referee import load_bot
from arena.referee.build import build_bot
from arena.tournaments.config import load_config
from arena.tournaments.runner import run_tournament
from arena.tournaments.store import Store

ROOT = Path(__file__).resolve().parents[2]
LANGS = ["java", "go", "rust", "cpp", "typescript", "csharp"]

#: what each kit's build and run need, beyond the arena itself
NEEDS = {
    "java": ["javac", "java"],
    "go": ["go"],
    "rust": ["cargo", "rustc"],
    "cpp": ["g++", "/usr/include/nlohmann/json.hpp"],
    "typescript": ["tsc", "node"],
    "csharp": ["mcs", "mono"],
}


def toolchain(lang: str) -> None:
    missing = [
        need
        for need in NEEDS[lang]
        if not (Path(need).exists() if need.startswith("/") else shutil.which(need))
    ]
    if missing:
        pytest.skip(
            f"the {lang} kit needs {', '.join(missing)} (Debian: {KITS[lang].toolchain}; "
            ".ci/setup-system installs them)"
        )


def arena(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture(scope="module", params=LANGS)
def checked_kit(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """A bot made by `arena new` and checked by `arena check` (as an author would), with the
    check's output and its wall time (build included)."""
    lang = request.param
    toolchain(lang)
    top = tmp_path_factory.mktemp(f"kit-{lang}")
    made = arena("new", "mybot", "--lang", lang, cwd=top)
    assert made.returncode == 0, made.stderr
    started = time.monotonic()
    check = arena("check", "mybot", cwd=top)
    seconds = time.monotonic() - started
    return lang, top / "mybot", check, seconds


@pytest.mark.slow
def test_the_kit_passes_arena_check_and_is_built_once(checked_kit):
    lang, bot_dir, check, seconds = checked_kit
    assert check.returncode == 0, check.stdout + check.stderr
    assert "mybot: all checks passed" in check.stdout, check.stdout
    for game in ("papagra", "wrigglers", "stripes", "quadraphages", "hexaphage"):
        assert f"ok   {game} as" in check.stdout, (game, check.stdout)
    # named outputs: the check built it, and nothing is due before the next game
    bot = load_bot(bot_dir)
    assert bot.build_outputs
    assert all((bot.workdir / out).exists() for out in bot.build_outputs)
    assert not bot.needs_build(), f"{lang}: would be rebuilt before every game"
    print(f"{lang}: arena new to a passing arena check in {seconds:.1f} s")


@pytest.mark.slow
async def test_the_kit_plays_a_tournament_with_sessions(checked_kit, tmp_path):
    lang, bot_dir, check, _ = checked_kit
    assert check.returncode == 0, check.stdout + check.stderr
    config = tmp_path / "kit.toml"
    config.write_text(
        f"""
seed = 11
concurrency = 2
reuse = true
format = "gauntlet"
games = [
  {{ name = "papagra", options = {{ board = "hex 4", extra_removals = 1, max_turns = 30 }} }},
  {{ name = "wrigglers", options = {{ max_turns = 40 }} }},
  {{ name = "stripes", options = {{ max_turns = 40 }} }},
  {{ name = "quadraphages", options = {{ max_turns = 40 }} }},
  {{ name = "hexaphage", options = {{ max_turns = 40 }} }},
]
time_control = {{ base = 30.0, increment = 0.5, startup = 20.0 }}
results = "kit.sqlite"
bots = [
  {{ path = "{bot_dir}", name = "kit", challenger = true }},
  "{ROOT / "bots" / "random-py"}",
  "{ROOT / "bots" / "strong"}",
]
""",
        encoding="utf-8",
    )
    cfg = load_config(config)
    out = await run_tournament(cfg)
    assert out.status == "complete" and out.played == 20, out  # 2 opponents x 5 games x 2 seats
    with Store(cfg.results) as store:
        records = [store.record(row.game_id) for row in store.games()]
    games_seen, session_games = set(), []
    for rec in records:
        seat = next(i for i, b in enumerate(rec["bots"]) if b["name"] == "kit")
        result = rec["result"]
        assert not (result["forfeit"] and result["loser_seat"] == seat), (lang, result)
        assert rec["ready"][seat]["sessions"] is True
        session_games.append(rec["ready"][seat]["session_game"])
        games_seen.add(rec["game"])
    assert games_seen == {"papagra", "wrigglers", "stripes", "quadraphages", "hexaphage"}
    assert max(session_games) > 1, "the kit's process was never kept for a next game"


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A directory every uid can reach, as a league's unpacked bots are (pytest's own are
    0700 under root), so the build runs under a uid of its own where the machine allows."""
    top = Path(tempfile.mkdtemp(prefix="arena-kit-build-"))
    top.chmod(0o755)
    yield top
    shutil.rmtree(top, ignore_errors=True)


def open_copy(lang: str, top: Path) -> Path:
    bot_dir = top / "bot"
    new_bot(bot_dir, lang)
    for path in [bot_dir, *bot_dir.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return bot_dir


@pytest.mark.slow
@pytest.mark.parametrize("lang", LANGS)
async def test_the_kit_builds_in_the_sandbox_without_a_network(lang, open_dir):
    """As a league builds a submission (arena.referee.build): its own uid where the machine
    allows, no network, the filesystem read-only but the bot's directory, HOME the bot's
    directory. A kit that fetched a package at build time would fail here."""
    toolchain(lang)
    bot = load_bot(open_copy(lang, open_dir))
    assert await build_bot(bot) is not None
    assert not bot.needs_build()
    assert await build_bot(bot) is None  # unchanged: not built again
