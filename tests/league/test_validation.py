"""A new version's validation: real games against the bundled random bot under the sandbox;
a good bot passes, a bot that crashes on one variant or times out fails with the `arena check`
sentence and its stderr; manifest and build problems stop it before any game."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from arena.games import GAME_NAMES
from arena.league.errors import LeagueError
from arena.league.validation import load_submitted_bot, validate_version
from arena.referee import TimeControl
from arena.sandbox import Limits

ROOT = Path(__file__).resolve().parents[2]
ALL_VARIANTS = [(name, {}) for name in GAME_NAMES]
TC = TimeControl.parse("20+1", startup=20)


def sdk_bot(top: Path, body: str, build: list[str] | None = None, extra: str = "") -> Path:
    d = top / "bot"
    d.mkdir()
    manifest = 'name = "candidate"\ncommand = ["python3", "bot.py"]\n' + extra
    if build:
        manifest += f"build = {json.dumps(build)}\n"
    (d / "bot.toml").write_text(manifest)
    (d / "bot.py").write_text(
        "import sys, time\nfrom protocol.sdk import run_bot\n\n"
        f"def choose(turn, bot):\n{body}\n    return bot.rng.choice(turn['legal'])\n\n"
        "raise SystemExit(run_bot(choose, name='candidate'))\n"
    )
    return d


async def test_bundled_random_bot_passes_every_variant(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "bots" / "random-py", tmp_path / "random-py")
    report = await validate_version(tmp_path / "random-py", ALL_VARIANTS, Limits(), TC)
    assert report.passed, report.problem
    assert report.stage == "passed" and report.problem is None
    assert len(report.games) == 2 * len(GAME_NAMES)
    assert {(g.variant, g.seat) for g in report.games} == {
        (v, s) for v in GAME_NAMES for s in (0, 1)
    }
    assert all(g.passed and g.problem is None and g.turns > 0 for g in report.games)
    json.dumps(report.to_dict())  # the API can send it as is


async def test_bot_crashing_on_one_variant_fails_with_the_reason(tmp_path: Path) -> None:
    body = (
        "    if bot.game == 'stripes':\n"
        "        print('cannot handle stripes', file=sys.stderr, flush=True)\n"
        "        raise SystemExit(3)"
    )
    d = sdk_bot(tmp_path, body)
    report = await validate_version(d, ALL_VARIANTS, Limits(), TC)
    assert not report.passed and report.stage == "games"
    failed = report.games[-1]
    assert failed.variant == "stripes" and not failed.passed
    assert failed.reason == "crash"
    assert failed.problem is not None and failed.problem.startswith("crashed: ")
    assert report.problem == f"stripes as {failed.colour}: {failed.problem}"
    assert "cannot handle stripes" in report.stderr_tail
    # every variant before it was played in both seats and passed
    assert all(g.passed for g in report.games[:-1])
    assert {g.variant for g in report.games[:-1]} == set(GAME_NAMES[: GAME_NAMES.index("stripes")])


async def test_bot_that_times_out_fails(tmp_path: Path) -> None:
    d = sdk_bot(tmp_path, "    time.sleep(60)")
    tc = TimeControl.parse("1+0.1", startup=20)
    report = await validate_version(d, [("papagra", {})], Limits(), tc)
    assert not report.passed
    (game,) = report.games
    assert game.reason == "time_forfeit"
    assert report.problem is not None
    assert report.problem.startswith("papagra as ")
    assert "ran out of time in turn" in report.problem


async def test_the_leagues_limits_are_the_ceiling(tmp_path: Path) -> None:
    """The manifest asks for 4 GiB; the league gives 200 MiB, and a 600 MiB bot is stopped."""
    d = sdk_bot(
        tmp_path, "    bot.memory['x'] = bytearray(600 << 20)", extra="[limits]\nmemory_mb = 4096\n"
    )
    report = await validate_version(d, [("papagra", {})], Limits(memory_mb=200), TC)
    assert not report.passed
    # killed by the memory cgroup, or (rlimit only, no cgroup) a MemoryError crash
    assert report.games[0].reason in ("memory_limit", "crash"), report.problem


async def test_bot_that_never_starts_stops_at_the_handshake(tmp_path: Path) -> None:
    d = tmp_path / "bot"
    d.mkdir()
    (d / "bot.toml").write_text('name = "mute"\ncommand = ["sh", "-c", "echo nope >&2; exit 1"]\n')
    report = await validate_version(d, ALL_VARIANTS, Limits(), TC)
    assert not report.passed and len(report.games) == 1
    assert report.problem is not None and report.problem.startswith("handshake: ")
    assert "nope" in report.stderr_tail


async def test_manifest_pointing_outside_is_refused(tmp_path: Path) -> None:
    d = tmp_path / "bot"
    d.mkdir()
    (d / "bot.toml").write_text('name = "x"\ncommand = ["./run"]\nworkdir = ".."\n')
    with pytest.raises(LeagueError) as err:
        load_submitted_bot(d)
    assert err.value.status == 422 and err.value.field == "bot.toml"
    report = await validate_version(d, ALL_VARIANTS, Limits(), TC)
    assert (report.passed, report.stage) == (False, "manifest")
    assert report.problem == "bot.toml: workdir must stay inside the bot's directory"
    (d / "bot.toml").write_text('name = "x"\n')
    report = await validate_version(d, ALL_VARIANTS, Limits(), TC)
    assert report.stage == "manifest" and "missing required key 'command'" in report.problem
    assert str(tmp_path) not in report.problem  # the server's paths are not shown


async def test_missing_program_stops_before_the_games(tmp_path: Path) -> None:
    d = tmp_path / "bot"
    d.mkdir()
    (d / "bot.toml").write_text('name = "ghost"\ncommand = ["./run"]\n')
    report = await validate_version(d, ALL_VARIANTS, Limits(), TC)
    assert (report.passed, report.stage, report.games) == (False, "start", ())
    assert report.problem == "bot ghost: cannot start ./run: no such file"


@pytest.mark.parametrize(
    ("command", "env", "problem"),
    [
        ('["python3", "../other/bot.py"]', "", "command word '../other/bot.py' leads outside"),
        ('["python3", "/srv/league/bots/1/bot.py"]', "", "leads outside the bot's directory"),
        ('["/srv/league/bots/1/engine"]', "", "must be named without a path"),
        ('["../engine"]', "", "must be named without a path"),
        ('["python3", "bot.py"]', '[env]\nPATH = "/srv/league/bots/1"\n', "env.PATH cannot"),
    ],
)
def test_submitted_commands_name_only_their_own_files(
    tmp_path: Path, command: str, env: str, problem: str
) -> None:
    """The sandbox exposes the files a command names, so a submitted manifest must not name
    another version's files (to run its engine or read its book)."""
    d = tmp_path / "bot"
    d.mkdir()
    (d / "bot.toml").write_text(f'name = "x"\ncommand = {command}\n{env}')
    with pytest.raises(LeagueError) as err:
        load_submitted_bot(d)
    assert problem in str(err.value) and err.value.status == 422


def test_submitted_commands_of_their_own(tmp_path: Path) -> None:
    d = tmp_path / "bot"
    (d / "lib").mkdir(parents=True)
    for command in ('["python3", "bot.py", "--book", "lib/book.bin"]', '["node", "./bot.js"]'):
        (d / "bot.toml").write_text(f'name = "x"\ncommand = {command}\n')
        assert load_submitted_bot(d).name == "x"


async def test_failing_build_stops_before_the_games(tmp_path: Path) -> None:
    d = sdk_bot(tmp_path, "", build=["sh", "-c", "echo 'error: no compiler' >&2; exit 2"])
    report = await validate_version(d, ALL_VARIANTS, Limits(), TC)
    assert (report.passed, report.stage, report.games) == (False, "build", ())
    assert "error: no compiler" in (report.problem or "")
