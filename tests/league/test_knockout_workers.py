"""A knockout tournament (`format = "knockout"`) played on a league's workers: `arena tournament
run` with the league's PostgreSQL `database` plays nothing itself, two `arena league worker`s
play every stage of the bracket; the runner is SIGKILLed with games of the bracket in the
queue, run again, and resumes from its results file and the mailbox: every game once, the
bracket complete with a champion, a third run plays nothing, no process left."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import sqlalchemy as sa

from arena.tournaments.store import Store

from .support import ROOT, arena, make_league, postgres_database
from .test_workers import Runner, Worker, leftovers, q, slow_bots, tjobs, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

KNOCKOUT = """
name = "remote-knockout"
seed = 5
format = "knockout"
concurrency = 8
max_attempts = 3
bots = [
    {{ path = "{a}" }},
    {{ path = "{b}" }},
    {{ path = "{a}", name = "ra-two" }},
    {{ path = "{b}", name = "rb-two" }},
    {{ path = "{a}", name = "ra-three" }},
]
games = [{{ name = "stripes", options = {{ max_turns = 10 }} }}]
time_control = {{ base = 20.0, increment = 0.2, startup = 20.0 }}
results = "knockout.sqlite"
database = "{url}"

[knockout]
pairs = 1
extra_pairs = 1
"""


class ConfigRunner(Runner):
    """`arena tournament run CONFIG --plain`: the league's database from the config's own
    `database` key, not --database."""

    def __init__(self, cfg: Path, log: Path) -> None:
        self.log = log
        self.out = open(log, "ab")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "arena", "tournament", "run", str(cfg), "--plain"],
            cwd=ROOT,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
            stdout=self.out,
            stderr=self.out,
        )


def test_a_knockout_on_the_leagues_workers_resumes_after_a_kill(tmp_path: Path) -> None:
    bots = slow_bots(tmp_path, pause=0.05)  # games long enough to be caught in the queue
    tag = uuid.uuid4().hex[:6]
    names = [f"kw-a-{tag}", f"kw-b-{tag}"]
    with postgres_database() as url:
        make_league(tmp_path / "league", url)
        cfg = tmp_path / "knockout.toml"
        cfg.write_text(KNOCKOUT.format(a=bots[0], b=bots[1], url=url))
        engine = sa.create_engine(url)
        workers = [Worker(url, n, tmp_path, tmp_path / f"{n}.log", concurrency=1) for n in names]
        try:
            first = ConfigRunner(cfg, tmp_path / "run1.log")
            # kill it once a game is recorded and others still wait in the queue
            wait_until(
                lambda: (
                    q(engine, "SELECT count(*) FROM tournament_results")[0][0] >= 1
                    and tjobs(engine, "todo", "doing") >= 1
                ),
                "a first outcome with games still queued",
                120,
            )
            assert first.stop(signal.SIGKILL) == -signal.SIGKILL
            with Store(tmp_path / "knockout.sqlite") as s:
                at_kill = len(s.games())

            second = ConfigRunner(cfg, tmp_path / "run2.log")
            assert second.wait(300) == 0, second.text()
            assert "complete:" in second.text()
            with Store(tmp_path / "knockout.sqlite") as s:
                rows = s.games()
                ids = [r.game_id for r in rows]
                assert len(ids) == len(set(ids))  # every game once
                assert all(r.game_id.startswith("k") for r in rows)  # named by the bracket
                assert at_kill < len(rows)
            # each attempt's outcome once in the mailbox, and every game of the file among them
            outcomes = q(engine, "SELECT game_id, attempt FROM tournament_results")
            assert len(outcomes) == len(set(outcomes))
            assert set(ids) <= {g for g, _ in outcomes}
            workers_used = {w for (w,) in q(engine, "SELECT worker FROM tournament_results")}
            assert workers_used <= set(names)

            report = arena("tournament", "report", str(tmp_path / "knockout.sqlite"),
                           "--format", "json")  # fmt: skip
            data = json.loads(report.stdout)
            bracket = data["bracket"]
            assert bracket["champion"] is not None and data["progress"]["complete"]
            # 5 entrants: 3 byes in round 1, then 2 matches, then the final
            assert [len(r) for r in bracket["rounds"]] == [4, 2, 1]
            assert all(m["winner"] for r in bracket["rounds"] for m in r)

            again = ConfigRunner(cfg, tmp_path / "run3.log")
            assert again.wait(120) == 0, again.text()
            assert "0 games played this run" in again.text()
        finally:
            for w in workers:
                w.stop()
            engine.dispose()
    assert not leftovers(tmp_path, names), leftovers(tmp_path, names)
