"""A league whose ladder has a time bank (issue 22.5): its game is played by a real referee
worker process from the claimed job, as the in-process executor plays it, recorded, and its
game page's replay shows each bot's bank at every step; the API's record keeps the time control
with its bank. On SQLite and PostgreSQL."""

from __future__ import annotations

import json

import pytest
import trio

from arena.league.db import ledger, schema
from arena.league.executors.base import job_from_claim
from arena.workers.process import WorkerProcess

from .support import BACKENDS, BOTS, league_on, page_client

LADDER = {"move_time": 0.5, "bank": 2, "first_move": 1}


@pytest.fixture(params=BACKENDS)
def banked_league(request, tmp_path):
    games = [{"name": "stripes", "options": {"max_turns": 6}}]
    with league_on(request.param, tmp_path, games=games, time_control=LADDER) as league:
        yield league


def play_one_game(league) -> int:
    league.add_user("alice")
    league.add_user("bob")
    va = league.add_house_bot("alice", BOTS / "random-py")
    vb = league.add_house_bot("bob", BOTS / "random-c")
    entry = league.settings.games[0]
    with league.db.write() as conn:
        gid = ledger.create_game(
            conn,
            ledger.NewGame(
                schema.GameKind.RATED,
                entry.label,
                entry.name,
                dict(entry.options),
                5,
                (),
                league.settings.time_control.to_dict(),  # as the scheduler writes it
                va.id,
                vb.id,
            ),
        )
        claim = ledger.claim_game(conn, gid)
    assert claim is not None
    job = job_from_claim(claim, league.settings)

    async def play() -> dict:
        worker = await WorkerProcess.start([], None)
        try:
            return await worker.request(job.worker_request())
        finally:
            await worker.close()

    reply = trio.run(play)
    assert reply["type"] == "record", reply
    with league.db.write() as conn:
        # a record reply is its head (`record`: the small fields) and its text as it came
        # (`record_json`), which the league stores as the executors do
        assert ledger.record_result(
            conn, gid, claim.attempt, reply["record"], record_json=reply["record_json"]
        )
    return gid


def test_a_banked_ladder_game_shows_the_banks_on_its_page(banked_league):
    assert banked_league.settings.time_control.bank == 2.0
    gid = play_one_game(banked_league)
    with page_client(banked_league) as client:
        record = client.get(f"/api/v1/games/{gid}/record").json()
        html = client.get(f"/games/{gid}").text
    tc = record["time_control"]
    assert (tc["move_time"], tc["bank"], tc["first_move"]) == (0.5, 2, 1)
    assert record["result"]["reason"] != "time_forfeit", record["result"]["detail"]
    assert all(len(t["banks_after"]) == 2 for t in record["turns"])
    data = json.loads(html.split('id="replay-data">', 1)[1].split("</script>", 1)[0])
    assert data["steps"][0]["banks"] == [2, 2]
    by_turn = {t["turn"]: t["banks_after"] for t in record["turns"]}
    assert all(s["banks"] == by_turn[s["turn"]] for s in data["steps"][1:])
    assert "bank 2s" in data["time_control"] and "first move 1s" in data["time_control"]
