"""Formats (round robin, gauntlet), pools that grow, and the SPRT stopping rule, with real bots.

The gauntlet is checked by its schedule (who meets whom) and by a real run; a pool that grows
is a finished tournament whose config gains a bot and a game: only the new pairings are played
and the old games keep their ids; SPRT runs stop when the test decides and say so.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from arena.errors import ArenaError
from arena.tournaments.config import load_config
from arena.tournaments.formats import FORMATS, Gauntlet, Knockout, RoundRobin
from arena.tournaments.report import build_report
from arena.tournaments.runner import run_tournament
from arena.tournaments.schedule import build_schedule
from arena.tournaments.store import Store, StoreError

from .tournament_helpers import BOTS, REPO, write_config

PY, C, JS = BOTS / "random-py", BOTS / "random-c", BOTS / "random-js"


def _load(tmp_path: Path, text: str, name: str = "t"):
    return load_config(write_config(tmp_path, text, f"{name}.toml"))


def _bots(*entries: str) -> str:
    return "bots = [" + ", ".join(entries) + "]\n"


def test_registry_names_the_formats() -> None:
    assert {"round-robin": RoundRobin, "gauntlet": Gauntlet, "knockout": Knockout} == FORMATS


def test_round_robin_is_the_default_and_gauntlet_pairs_challengers_with_the_pool(
    tmp_path: Path,
) -> None:
    rr = _load(tmp_path, _bots(*(f'{{ path = "{C}", name = "{n}" }}' for n in "abcd")))
    assert rr.format == "round-robin"
    assert RoundRobin(rr.bots).pairings() == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    g = _load(
        tmp_path,
        'format = "gauntlet"\n'
        + _bots(
            f'{{ path = "{C}", name = "new", challenger = true }}',
            f'{{ path = "{C}", name = "o1" }}',
            f'{{ path = "{C}", name = "new2", challenger = true }}',
            f'{{ path = "{C}", name = "o2" }}',
        )
        + 'games = ["stripes", "papagra"]\nrounds = 2\n',
    )
    fmt = Gauntlet(g.bots)
    assert fmt.pairings() == [(0, 1), (0, 3), (2, 1), (2, 3)]
    sched = build_schedule(g, fmt.pairings())
    assert len(sched) == 4 * 2 * 2 * 2  # pairings x games x seats x rounds
    met = {frozenset(s.bots) for s in sched}
    assert met == {frozenset(p) for p in fmt.pairings()}  # the pool never meets itself
    # both seats of every pairing
    assert {s.bots for s in sched} >= {(0, 1), (1, 0), (2, 3), (3, 2)}
    # no challenger marked: the first bot is the challenger
    plain = _load(tmp_path, 'format = "gauntlet"\n' + _bots(f'"{PY}"', f'"{C}"', f'"{JS}"'))
    assert Gauntlet(plain.bots).pairings() == [(0, 1), (0, 2)]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('format = "swiss"\n' + _bots(f'"{PY}"', f'"{C}"'), "key 'format': expected one of"),
        (
            'format = "gauntlet"\n'
            + _bots(
                f'{{ path = "{PY}", challenger = true }}', f'{{ path = "{C}", challenger = true }}'
            ),
            "at least one bot that is not a challenger",
        ),
        (
            _bots(f'{{ path = "{PY}", challenger = true }}', f'"{C}"'),
            "key 'bots[0].challenger': only a format = \"gauntlet\"",
        ),
        (
            _bots(f'"{PY}"', f'"{C}"', f'"{JS}"') + "[sprt]\nelo0 = 0\nelo1 = 5\n",
            "an SPRT tests one",
        ),
        (_bots(f'"{PY}"', f'"{C}"') + "[sprt]\nelo0 = 5\nelo1 = 0\n", "elo0 must be below elo1"),
        (_bots(f'"{PY}"', f'"{C}"') + "[sprt]\nalpha = 2\n", "key 'sprt': alpha must be"),
        (_bots(f'"{PY}"', f'"{C}"') + '[sprt]\nmodel = "x"\n', "model must be one of"),
        (_bots(f'"{PY}"', f'"{C}"') + "[sprt]\nlos = 1\n", "key 'sprt.los': unknown key"),
    ],
)
def test_format_and_sprt_errors_name_the_key(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ArenaError, match=re.escape(message)):
        _load(tmp_path, text)


def _gauntlet_text(bots: list[str], games: str, results: str = "g.sqlite") -> str:
    return (
        'format = "gauntlet"\nseed = 3\nconcurrency = 2\n'
        + _bots(*bots)
        + f"games = {games}\n"
        + "time_control = { base = 20.0, increment = 0.2, startup = 20.0 }\n"
        + f'results = "{results}"\n'
    )


async def test_a_gauntlet_grows_by_a_bot_and_a_game(tmp_path: Path) -> None:
    first = [f'{{ path = "{C}", name = "new", challenger = true }}', f'"{PY}"']
    cfg = _load(tmp_path, _gauntlet_text(first, '["stripes"]'))
    out = await run_tournament(cfg)
    assert out.status == "complete" and out.played == 2
    with Store(cfg.results) as s:
        before = {r.game_id: r for r in s.games()}
    # add an opponent and a game: only new pairings and games are played
    grown = _load(tmp_path, _gauntlet_text([*first, f'"{JS}"'], '["stripes", "quadraphages"]'))
    out = await run_tournament(grown)
    assert out.status == "complete" and out.played == 6  # 2 pairings x 2 games x 2 seats - 2
    with Store(cfg.results) as s:
        rows = {r.game_id: r for r in s.games()}
        report = build_report(s)
    assert all(rows[g] == r for g, r in before.items())  # old games unchanged, same ids
    assert {frozenset(r.bots) for r in rows.values()} == {
        frozenset(("new", "random-py")),
        frozenset(("new", "random-js")),
    }
    assert report["progress"]["scheduled"] == 8 and report["progress"]["complete"]
    # removing a bot needs a new results file, and the error says what changed
    shrunk = _load(tmp_path, _gauntlet_text(first, '["stripes", "quadraphages"]'))
    with pytest.raises(StoreError, match="bot 'random-js' removed"):
        await run_tournament(shrunk)
    retimed = _load(
        tmp_path,
        _gauntlet_text([*first, f'"{JS}"'], '["stripes", "quadraphages"]').replace(
            "base = 20.0", "base = 30.0"
        ),
    )
    with pytest.raises(StoreError, match=r"time_control\.base changed from 20\.0 to 30\.0"):
        await run_tournament(retimed)


async def test_sprt_stops_the_run_when_it_decides(tmp_path: Path) -> None:
    # the strong bot against the random one: H1 (it is at least 0 Elo better than 100 Elo
    # worse, an easy test) is accepted long before the 200 scheduled games
    text = (
        "seed = 5\nconcurrency = 2\nrounds = 100\n"
        + _bots(f'"{BOTS / "strong"}"', f'"{PY}"')
        + 'games = ["stripes"]\n'
        + "time_control = { base = 20.0, increment = 0.2, startup = 20.0 }\n"
        + "[openings]\nturns = 1\n[sprt]\nelo0 = -100\nelo1 = 0\nalpha = 0.1\nbeta = 0.1\n"
    )
    cfg = _load(tmp_path, text)
    out = await run_tournament(cfg)
    assert out.status == "complete"
    assert out.sprt is not None and out.sprt.decision == "H1"
    assert out.sprt.llr >= out.sprt.params.upper
    assert out.played < 60
    with Store(cfg.results) as s:
        report = build_report(s)
        played = s.count_games()
    assert report["sprt"]["decision"] == "H1" and report["sprt"]["bot"] == "strong"
    assert report["progress"]["complete"]
    # a decided test is finished: running again plays nothing
    again = await run_tournament(cfg)
    assert again.played == 0 and again.sprt is not None and again.sprt.decision == "H1"
    with Store(cfg.results) as s:
        assert s.count_games() == played


def _arena(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "arena", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


def test_arena_sprt_stops_early_and_says_h1(tmp_path: Path) -> None:
    results = tmp_path / "s.sqlite"
    args = ["sprt", "stripes", str(BOTS / "strong"), str(PY), "--tc", "20+0.2", "-j", "2"]
    args += ["--elo0", "-100", "--elo1", "0", "--alpha", "0.1", "--beta", "0.1", "--seed", "3"]
    got = _arena(*args, "--results", str(results), cwd=tmp_path)
    assert got.returncode == 0, got.stderr
    lines = got.stdout.strip().splitlines()
    assert "H1 accepted" in lines[-3] and "LLR" in lines[-3] and "Elo +" in lines[-3]
    assert lines[-2].startswith("H1 accepted: strong")
    with Store(results) as s:
        assert 0 < s.count_games() < 100  # of --max-games 2000
    # the same command again: the test is decided, nothing more is played
    again = _arena(*args, "--results", str(results), cwd=tmp_path)
    assert again.returncode == 0 and lines[-3] in again.stdout
    status = _arena("tournament", "status", str(results), cwd=tmp_path)
    assert f"sprt        strong: {lines[-3]}" in status.stdout
    assert "(complete)" in status.stdout
    bad = _arena("sprt", "stripes", str(PY), str(C), "--elo0", "5", "--elo1", "0", cwd=tmp_path)
    assert bad.returncode == 2
    assert bad.stderr.strip() == (
        "arena: error: --elo0/--elo1/--alpha/--beta: elo0 must be below elo1, got elo0=5.0, "
        "elo1=0.0"
    )


def _row(game_id: str, bots: tuple[str, str], winner: int | None, pair: int, rnd: int = 1):
    from arena.tournaments.store import GameRow

    return GameRow(
        game_id, 0, rnd, "g", "stripes", pair, 0, bots, winner, "", "", "", False, None,
        (None, None), 1, 1.0, 1,
    )  # fmt: skip


def test_a_gauntlet_sprt_pools_the_challengers_pairs_against_every_opponent() -> None:
    from arena.tournaments.sprt import SprtParams
    from arena.tournaments.stopping import SprtRule

    rule = SprtRule(SprtParams(0, 5), "new")
    assert rule.add(_row("r1-g-p0-a", ("new", "a"), 0, 0)) is None  # half a pair
    state = rule.add(_row("r1-g-p0-b", ("a", "new"), None, 0))  # win + draw = 1.5
    assert state is not None and list(state.pentanomial) == [0, 0, 0, 1, 0]
    rule.add(_row("r1-g-p1-a", ("new", "b"), 1, 1))
    state = rule.add(_row("r1-g-p1-b", ("b", "new"), 0, 1))  # two losses against b: 0
    assert list(state.pentanomial) == [1, 0, 0, 1, 0]
    assert rule.add(_row("r1-g-p2-a", ("a", "b"), 0, 2)) is None  # not the tested bot
    assert rule.state().pairs == 2


def test_arena_sprt_builds_a_two_bot_config_with_openings_and_distinct_names(
    tmp_path: Path,
) -> None:
    from arena.cli import build_parser
    from arena.cli.sprt import build_config

    (tmp_path / "w.txt").write_text("e5 ; d4\nc3 ; g7\n")
    argv = ["sprt", "wrigglers", str(PY), str(PY), "--openings", str(tmp_path / "w.txt")]
    argv += ["--max-games", "11", "--results", str(tmp_path / "r.sqlite"), "--elo1", "10"]
    args = build_parser().parse_args(argv)
    config, names = build_config(args)
    assert names == ["random-py-new", "random-py-old"]
    assert [b.alias for b in config.bots] == names
    assert config.games[0].openings == ((("e5",), ("d4",)), (("c3",), ("g7",)))
    assert config.rounds == 6  # 6 game pairs cover 11 games
    assert config.sprt is not None and config.sprt.elo1 == 10


def test_arena_sprt_plays_with_a_time_bank_and_records_it(tmp_path: Path) -> None:
    """issue 22.5: `--bank` and `--first-move` reach the tournament's games (through the
    referee workers) and their records: the time control, and each turn's banks left."""
    results = tmp_path / "bank.sqlite"
    args = ["sprt", "stripes", str(PY), str(C), "--move-time", "1", "--bank", "2"]
    args += ["--first-move", "3", "--max-games", "2", "-o", "max_turns=6", "--seed", "5"]
    got = _arena(*args, "--results", str(results), cwd=tmp_path)
    assert got.returncode in (0, 1, 3), got.stderr  # decided either way, or undecided
    with Store(results) as s:
        rows = s.games()
        assert len(rows) == 2
        for row in rows:
            record = s.record(row.game_id)
            tc = record["time_control"]
            assert (tc["base"], tc["move_time"], tc["bank"], tc["first_move"]) == (None, 1, 2, 3)
            assert record["turns"] and all(len(t["banks_after"]) == 2 for t in record["turns"])
            assert all(0.0 <= b <= 2.0 for t in record["turns"] for b in t["banks_after"])
    # the `arena match` command that plays the game again keeps its clock
    again = _arena("tournament", "record", str(results), rows[0].game_id, "--command", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "--move-time 1 " in again.stdout and "--bank 2 --first-move 3" in again.stdout
    assert "--tc" not in again.stdout
