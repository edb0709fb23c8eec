"""Reports from a results file: standings, forfeits, crosstable, pentanomial, JSON/CSV/text."""

from __future__ import annotations

import csv
import io
import itertools
import json
from pathlib import Path

import pytest

from arena.tournaments.report import (
    build_report,
    crosstable,
    ratings_of,
    render_csv,
    render_games_csv,
    render_text,
    standings,
)
from arena.tournaments.store import GameRow, Store

from .tournament_helpers import fake_record

CONFIG = {
    "name": "rep",
    "games": [
        {"label": "wrigglers", "name": "wrigglers", "options": {}},
        {"label": "stripes", "name": "stripes", "options": {}},
    ],
    "rounds": 1,
    "seed": 3,
    "max_attempts": 3,
    "time_control": {"base": 5.0, "increment": 0.1, "move_time": None},
    "opening_turns": 2,
}


@pytest.fixture
def store(tmp_path: Path):
    s = Store(tmp_path / "rep.sqlite", create=True)
    bots = ["alpha", "beta", "gamma"]
    s.bind({}, CONFIG, bots, list(itertools.combinations(bots, 2)), "fp")
    run = s.start_run(12, 12)
    # (game, pair, seat_order, bots by seat, winner, reason)
    games = [
        ("wrigglers", 0, 0, ("alpha", "beta"), 0, "no_moves"),
        ("wrigglers", 0, 1, ("beta", "alpha"), 1, "time_forfeit"),  # alpha 2/2
        ("wrigglers", 1, 0, ("alpha", "gamma"), None, "max_turns"),
        ("wrigglers", 1, 1, ("gamma", "alpha"), 0, "crash"),  # alpha 0.5/2
        ("stripes", 2, 0, ("beta", "gamma"), 1, "illegal_action"),
        ("stripes", 2, 1, ("gamma", "beta"), 1, "board_full"),  # beta 1/2
        ("stripes", 0, 0, ("alpha", "beta"), 0, "board_full"),  # unpaired
    ]
    for k, (game, pair, so, bots, winner, reason) in enumerate(games):
        gid = f"r1-{game}-p{pair}-{'ab'[so]}"
        s.record_game(
            game_id=gid,
            seq=k,
            round_=1,
            game=game,
            pair=pair,
            seat_order=so,
            attempt=1,
            run_id=run,
            record=fake_record(gid, bots, winner, reason, game),
        )
    s.record_void("r1-stripes-p1-a", 1, "SandboxFault: x", run)
    yield s
    s.close()


def test_standings_and_forfeits(store: Store) -> None:
    rep = build_report(store)
    st = {s["bot"]: s for s in rep["standings"]}
    assert st["alpha"]["points"] == 3.5 and st["alpha"]["games"] == 5
    assert (st["alpha"]["wins"], st["alpha"]["draws"], st["alpha"]["losses"]) == (3, 1, 1)
    assert st["alpha"]["forfeits"]["crash"] == 1
    assert st["beta"]["forfeits"]["time"] == 1 and st["beta"]["forfeits"]["illegal"] == 1
    assert st["gamma"]["points"] == 2.5 and st["beta"]["points"] == 1.0
    assert [s["bot"] for s in rep["standings"]] == ["alpha", "gamma", "beta"]
    assert sum(s["points"] for s in rep["standings"]) == 7
    assert rep["per_game"]["stripes"]["games"] == 3
    assert {s["bot"]: s["points"] for s in rep["per_game"]["wrigglers"]["standings"]} == {
        "alpha": 2.5,
        "beta": 0.0,
        "gamma": 1.5,
    }
    prog = rep["progress"]
    assert (prog["scheduled"], prog["played"], prog["missing"]) == (12, 7, 5)
    assert prog["voided_attempts"] == 1 and prog["unplayable"] == []


def test_crosstable_and_pentanomial(store: Store) -> None:
    rep = build_report(store)
    ct = rep["crosstable"]
    assert ct["alpha"]["beta"] == {"points": 3.0, "games": 3}
    assert ct["beta"]["alpha"] == {"points": 0.0, "games": 3}
    assert ct["alpha"]["gamma"] == {"points": 0.5, "games": 2}
    pent = {tuple(p["bots"]): p["counts"] for p in rep["pentanomial"]}
    assert pent[("alpha", "beta")] == [0, 0, 0, 0, 1]  # the unpaired stripes game left out
    assert pent[("alpha", "gamma")] == [0, 1, 0, 0, 0]
    assert pent[("beta", "gamma")] == [0, 0, 1, 0, 0]


def test_ratings_in_report(store: Store) -> None:
    rep = build_report(store)
    elos = {p["bot"]: p["elo"] for p in rep["ratings"]["players"]}
    assert elos["alpha"] > elos["gamma"] > elos["beta"]
    assert sum(elos.values()) == pytest.approx(0, abs=0.2)


def test_formats(store: Store) -> None:
    rep = build_report(store)
    json.loads(json.dumps(rep))
    text = render_text(rep)
    for word in ("Standings", "alpha", "Crosstable", "Pentanomial", "3/3", "wrigglers"):
        assert word in text
    rows = list(csv.DictReader(io.StringIO(render_csv(rep))))
    assert {r["scope"] for r in rows} == {"all", "wrigglers", "stripes"}
    alpha = next(r for r in rows if r["scope"] == "all" and r["bot"] == "alpha")
    assert float(alpha["points"]) == 3.5 and alpha["forfeit_crash"] == "1"
    games = list(csv.DictReader(io.StringIO(render_games_csv(store.games()))))
    assert len(games) == 7 and games[1]["reason"] == "time_forfeit"


def test_unplayable(store: Store) -> None:
    run = store.start_run(12, 5)
    for attempt in (2, 3):
        store.record_void("r1-stripes-p1-a", attempt, "SandboxFault: x", run)
    assert build_report(store)["progress"]["unplayable"] == ["r1-stripes-p1-a"]


def _rows(games: list[tuple[str, str, int | None]]) -> list[GameRow]:
    """Game rows from (bot in seat 0, bot in seat 1, winning seat or None for a draw)."""
    out = []
    for k, (a, b, winner) in enumerate(games):
        result = {0: "1-0", 1: "0-1", None: "1/2-1/2"}[winner]
        out.append(
            GameRow(
                game_id=f"r1-stripes-p{k}-a",
                seq=k,
                round=1,
                game="stripes",
                game_name="stripes",
                pair=k,
                seat_order=0,
                bots=(a, b),
                winner=winner,
                result=result,
                reason="board_full",
                detail="",
                forfeit=False,
                loser_seat=None if winner is None else 1 - winner,
                scores=(0, 0),
                turns=9,
                duration=1.0,
                attempt=1,
            )
        )
    return out


def test_ties_on_points_go_by_elo_never_by_fewer_games() -> None:
    # a and b both have 1 point; a took it from b in one game more, so its Elo is higher
    rows = _rows([("d", "b", 1), ("b", "a", 1), ("a", "c", 1), ("a", "c", 1), ("c", "d", None)])
    table = {s["bot"]: s for s in standings(["a", "b", "c", "d"], rows)}
    assert table["a"]["points"] == table["b"]["points"] == 1.0
    assert table["a"]["games"] > table["b"]["games"]
    elo = {p["bot"]: p["elo"] for p in ratings_of(["a", "b", "c", "d"], rows)["players"]}
    assert elo["a"] > elo["b"]
    assert table["a"]["rank"] < table["b"]["rank"]
    # equal points and equal Elo: by name
    twins = standings(["y", "x"], _rows([("y", "x", None)]))
    assert [s["bot"] for s in twins] == ["x", "y"]


def test_perfect_score_note_only_for_a_perfect_score() -> None:
    # {a, b} never lost a point to {c, d}: the ratings need the prior, yet nobody scored 100%
    games = [("a", "b", None), ("c", "d", None)]
    games += [(w, v, 0) for w in "ab" for v in "cd"]
    rows = _rows(games)
    ratings = ratings_of(list("abcd"), rows)
    assert ratings["prior_draws_per_pair"] == 1
    assert all(0 < p["points"] < p["games"] for p in ratings["players"])
    text = render_text(_report_of(rows, list("abcd")), width=100)
    assert "perfect score" not in text
    assert "some bots never lost a point to the others: Elo with 1 virtual draw" in text
    perfect = render_text(_report_of(_rows([("a", "b", 0)]), ["a", "b"]), width=100)
    assert "(a perfect score: Elo with 1 virtual draw per pair)" in perfect


def _report_of(rows: list[GameRow], bots: list[str]) -> dict:
    """A report dict over these rows, as build_report shapes it (no results file needed)."""
    ratings = ratings_of(bots, rows)
    return {
        "tournament": "t",
        "bots": bots,
        "games": ["stripes"],
        "time_control": {"base": 5.0, "increment": 0.1},
        "progress": {
            "played": len(rows),
            "scheduled": len(rows),
            "missing": 0,
            "complete": True,
            "voided_attempts": 0,
            "unplayable": [],
        },
        "standings": standings(bots, rows),
        "ratings": ratings,
        "per_game": {},
        "crosstable": crosstable(bots, rows),
        "pentanomial": [],
        "reasons": {},
    }


LONG_NAMES = ["random-python-bot", "random-c-bot", "strong-deeper-search", "strong", "js-bot"]


@pytest.mark.parametrize("width", [80, 110])
def test_report_fits_the_width_and_never_cuts_a_name(width: int) -> None:
    games = [
        (a, b, k % 3 or None) for k, (a, b) in enumerate(itertools.permutations(LONG_NAMES, 2))
    ]
    rows = _rows([(a, b, None if w is None else w - 1) for a, b, w in games])
    text = render_text(_report_of(rows, LONG_NAMES), width=width)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= width, text
    assert "…" not in text
    standings_lines = lines[lines.index("Standings, all games") + 1 :]
    for name in LONG_NAMES:
        assert any(f" {name} " in line for line in standings_lines[:8]), (name, text)
    crosstable_lines = lines[next(i for i, x in enumerate(lines) if x.startswith("Crosstable")) :]
    for name in LONG_NAMES:
        assert any(name in line for line in crosstable_lines), (name, text)


def test_report_width_follows_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = _rows([(a, b, 0) for a, b in itertools.permutations(LONG_NAMES, 2)])
    monkeypatch.setenv("COLUMNS", "80")
    text = render_text(_report_of(rows, LONG_NAMES))
    assert max(len(line) for line in text.splitlines()) <= 80, text
    monkeypatch.setenv("COLUMNS", "150")
    wide = render_text(_report_of(rows, LONG_NAMES))
    assert max(len(line) for line in wide.splitlines()) > 80


def test_games_listing_in_every_format(store: Store, capsys: pytest.CaptureFixture) -> None:
    from arena.cli import main

    ids = [r.game_id for r in store.games()]
    assert main(["tournament", "report", str(store.path), "--games"]) == 0
    text = capsys.readouterr().out
    assert "7 recorded games" in text
    for gid in ids:
        assert gid in text
    assert "Standings" not in text
    assert main(["tournament", "report", str(store.path), "--games", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [g["game_id"] for g in data["games"]] == ids
    assert data["games"][1]["reason"] == "time_forfeit"
    assert data["games"][1]["bots"] == ["beta", "alpha"]
    assert main(["tournament", "report", str(store.path), "--games", "--format", "csv"]) == 0
    assert capsys.readouterr().out.startswith("game_id,round,game")
