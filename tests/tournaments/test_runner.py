"""The runner with real bots and real games: complete runs, stop and resume, voided games."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

from arena.sandbox import SandboxFault
from arena.tournaments.config import load_config
from arena.tournaments.progress import Progress
from arena.tournaments.report import build_report
from arena.tournaments.runner import run_tournament
from arena.tournaments.store import GameRow, Store, StoreError

from .tournament_helpers import BOTS, REPO, write_config


def _config(tmp_path: Path, name: str, rounds: int = 1, extra: str = ""):
    text = f"""
seed = 11
rounds = {rounds}
concurrency = 2
bots = ["{BOTS / "random-py"}", "{BOTS / "random-c"}"]
games = ["wrigglers", "quadraphages"]
time_control = {{ base = 20.0, increment = 0.2, startup = 20.0 }}
results = "{name}.sqlite"
{extra}
"""
    return load_config(write_config(tmp_path, text, f"{name}.toml"))


def game_signature(store: Store) -> dict[str, Any]:
    """What must be identical between two runs of the same tournament with deterministic bots."""
    out = {}
    for row in store.games():
        rec = store.record(row.game_id)
        moves = [[a["action"] for a in t["actions"]] for t in rec["turns"]]
        out[row.game_id] = (
            row.bots,
            row.winner,
            row.reason,
            row.turns,
            rec["opening"],
            moves,
            rec["seed"],
        )
    return out


class StopAfter(Progress):
    """Stops the run (like Ctrl-C) once `n` games have finished in it."""

    def __init__(self, n: int, stop: trio.Event) -> None:
        self.n, self.stop, self.rows = n, stop, []

    def game_finished(self, row: GameRow) -> None:
        self.rows.append(row)
        if len(self.rows) >= self.n:
            self.stop.set()


@pytest.mark.slow
async def test_stop_and_resume_equals_uninterrupted(tmp_path: Path) -> None:
    full = _config(tmp_path, "full")
    outcome = await run_tournament(full)
    assert outcome.status == "complete" and outcome.played == outcome.scheduled == 4
    with Store(full.results) as s:
        reference = game_signature(s)
        assert len(reference) == 4
        assert all(r.reason for r in s.games())

    part = _config(tmp_path, "part")
    stop = trio.Event()
    first = await run_tournament(part, progress=StopAfter(1, stop), stop=stop)
    assert first.status == "stopped"
    assert 1 <= first.played < 4
    second = await run_tournament(part)
    assert second.status == "complete"
    assert second.pending_at_start == 4 - first.played
    assert second.played == second.pending_at_start  # only the missing games were played
    with Store(part.results) as s:
        assert game_signature(s) == reference
        assert [r["status"] for r in s.runs()] == ["stopped", "complete"]

    # nothing left: a third run plays nothing
    third = await run_tournament(part)
    assert (third.status, third.played, third.pending_at_start) == ("complete", 0, 0)


@pytest.mark.slow
async def test_voided_games_are_replayed(tmp_path: Path) -> None:
    from arena.referee import play_match

    cfg = _config(tmp_path, "voids", extra="max_attempts = 2")
    calls: dict[str, int] = {}

    async def flaky(match, *args, **kwargs):
        gid = match.match_id.split("/")[-1]
        calls[gid] = calls.get(gid, 0) + 1
        if gid.endswith("-a") and calls[gid] == 1:  # first attempt of every seat-order-a game
            raise SandboxFault("injected: the machine hiccuped")
        if "quadraphages" in gid and gid.endswith("-b"):  # never playable
            raise SandboxFault("injected: always broken")
        return await play_match(match, *args, **kwargs)

    outcome = await run_tournament(cfg, play_match=flaky)
    assert outcome.status == "incomplete"
    assert outcome.unplayable == ["r1-quadraphages-p0-b"]
    assert outcome.played == 3
    with Store(cfg.results) as s:
        voids = s.voids()
        assert {v["game_id"] for v in voids} == {
            "r1-wrigglers-p0-a",
            "r1-quadraphages-p0-a",
            "r1-quadraphages-p0-b",
        }
        assert all("injected" in v["reason"] for v in voids)
        rows = {r.game_id: r for r in s.games()}
        assert rows["r1-wrigglers-p0-a"].attempt == 2
        assert rows["r1-wrigglers-p0-b"].attempt == 1

    # the resume plays the unplayable game again (the fault is gone now)
    outcome = await run_tournament(cfg)
    assert (outcome.status, outcome.played) == ("complete", 1)


async def test_a_bug_in_the_arena_voids_the_game_instead_of_stopping_the_run(
    tmp_path: Path,
) -> None:
    from arena.referee import play_match

    cfg = _config(tmp_path, "bug", extra="max_attempts = 2")
    calls: dict[str, int] = {}

    async def buggy(match, *args, **kwargs):
        gid = match.match_id.split("/")[-1]
        calls[gid] = calls.get(gid, 0) + 1
        if gid == "r1-wrigglers-p0-b" and calls[gid] == 1:
            raise NameError("name 'Confinement' is not defined")
        return await play_match(match, *args, **kwargs)

    outcome = await run_tournament(cfg, play_match=buggy)
    assert (outcome.status, outcome.played) == ("complete", 4)
    with Store(cfg.results) as s:
        (void,) = s.voids()
        assert void["game_id"] == "r1-wrigglers-p0-b"
        assert "internal error NameError" in void["reason"]


async def test_a_game_whose_commit_fails_is_kept_and_the_run_stops_with_one_error(
    tmp_path: Path,
) -> None:
    """The results file becomes unwritable while a game is in play (immutable: needs root):
    the finished game's record goes to a spare file named in the error, nothing is lost."""
    from arena.referee import play_match

    if os.geteuid() != 0:
        pytest.skip("making an open SQLite file unwritable needs chattr (root)")
    cfg = dataclasses.replace(_config(tmp_path, "lock"), concurrency=1)
    locked: list[Path] = []

    async def then_lock(match, *args, **kwargs):
        record = await play_match(match, *args, **kwargs)
        if not locked:
            for p in (cfg.results, Path(f"{cfg.results}-wal")):
                await trio.run_process(["chattr", "+i", str(p)])
                locked.append(p)
        return record

    try:
        with pytest.raises(BaseExceptionGroup) as err:
            await run_tournament(cfg, play_match=then_lock)
    finally:
        for p in locked:
            await trio.run_process(["chattr", "-i", str(p)])
    stores, rest = err.value.split(StoreError)
    assert rest is None and stores is not None, err.value
    while isinstance(stores, BaseExceptionGroup):
        (stores,) = stores.exceptions
    error = stores
    message = str(error)
    assert "finished but was not recorded, its record was saved to " in message, message
    spare = trio.Path(message.rsplit("saved to ", 1)[1])
    try:
        assert json.loads(await spare.read_text())["match_id"].startswith(f"{cfg.name}/r1-")
    finally:
        await spare.unlink()


async def test_results_file_bound_to_its_tournament(tmp_path: Path) -> None:
    cfg = _config(tmp_path, "bound")
    with Store(cfg.results, create=True) as s:
        s.bind({"bots": {"x": {}, "y": {}}}, {}, ["x", "y"], [("x", "y")], "another")
    with pytest.raises(StoreError, match="another 'results' path"):
        await run_tournament(cfg)


class KillWorkers(Progress):
    """SIGKILLs every referee worker process when the `n`-th game attempt starts."""

    def __init__(self, n: int) -> None:
        self.n, self.started, self.killed = n, 0, 0

    def game_started(self, game_id: str) -> None:
        self.started += 1
        if self.started != self.n:
            return
        for d in Path("/proc").iterdir():
            try:
                cmd = (d / "cmdline").read_bytes()
                stat = (d / "stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if b"arena.workers.child" in cmd and ppid == os.getpid():
                os.kill(int(d.name), signal.SIGKILL)
                self.killed += 1


@pytest.mark.slow
async def test_a_dead_worker_voids_its_game_which_is_replayed(tmp_path: Path) -> None:
    cfg = _config(tmp_path, "dead", extra="pin_cores = true")
    killer = KillWorkers(3)
    outcome = await run_tournament(cfg, progress=killer)
    assert killer.killed >= 1
    assert outcome.status == "complete" and outcome.played == 4
    assert outcome.voided >= 1
    with Store(cfg.results) as s:
        voids = s.voids()
        assert voids and all("WorkerDied" in v["reason"] for v in voids)
        assert s.count_games() == 4
        assert {r.attempt for r in s.games()} >= {2}


@pytest.mark.slow
async def test_forfeits_by_kind_from_real_misbehaving_bots(tmp_path: Path) -> None:
    testbot = REPO / "tests" / "referee" / "bots" / "testbot.py"
    bad = {"crasher": "crash", "illegal": "illegal", "talker": "unknown_type", "sleeper": "late"}
    bots = ", ".join(
        f'{{ command = "{sys.executable} {testbot} {mode}", name = "{name}" }}'
        for name, mode in bad.items()
    )
    text = f"""
seed = 3
concurrency = 2
bots = ["{BOTS / "random-c"}", {bots}]
games = ["wrigglers"]
time_control = {{ move_time = 0.3, startup = 30.0 }}
"""
    cfg = load_config(write_config(tmp_path, text, "forfeits.toml"))
    outcome = await run_tournament(cfg)
    assert outcome.status == "complete" and outcome.played == 20
    with Store(cfg.results) as s:
        rep = build_report(s)
    st = {row["bot"]: row for row in rep["standings"]}
    assert st["random-c"]["points"] == 8 and not any(st["random-c"]["forfeits"].values())
    # a misbehaving bot forfeits against random-c and whenever it moves first against another
    for name, kind in (
        ("crasher", "crash"),
        ("illegal", "illegal"),
        ("talker", "protocol"),
        ("sleeper", "time"),
    ):
        assert st[name]["games"] == 8
        assert st[name]["forfeits"][kind] == 5, (name, st[name])
        assert sum(st[name]["forfeits"].values()) == 5
    assert rep["reasons"] == {
        "crash": 5,
        "illegal_action": 5,
        "protocol_error": 5,
        "time_forfeit": 5,
    }
