"""Reports from a results file: standings, forfeits, crosstable, pentanomial, JSON/CSV/text."""

from __future__ import annotations

import csv
import io
import itertools
import json
from pathlib import Path

import pytest
from tournament_helpers import fake_record

from arena.tournaments.report import build_report, render_csv, render_games_csv, render_text
from arena.tournaments.store import Store

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
