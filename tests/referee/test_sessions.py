"""Bot sessions (arena/referee/sessions.py): a kept process plays the bot's next game, and any
doubt ends it. Real bot processes, real pipes; the pool is the one a tournament worker uses."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import trio

from arena.referee import MatchConfig, TimeControl, bot_from_command, load_bot, play_match
from arena.referee.sessions import SESSION_CPU_GAMES, SessionPool

ROOT = Path(__file__).resolve().parents[2]
TC = TimeControl(startup=20.0, base=60.0, increment=1.0)

# A JSON Lines bot for Papagra on a tiny board: plays the first legal action, offers sessions
# (unless told not to), and misbehaves on request: `garbage` writes a message between games,
# `illegal` plays an illegal action in its second game, `stderr` writes one line per game.
BOT = textwrap.dedent(
    """
    import json, os, sys
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    games = 0
    def send(msg):
        sys.stdout.write(json.dumps(msg) + "\\n"); sys.stdout.flush()
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["type"] == "hello":
            games += 1
            print(f"game {games} pid {os.getpid()}", file=sys.stderr, flush=True)
            send({"type": "ready", "name": "sess", "legal": True, "sessions": mode != "nosess"})
        elif msg["type"] == "turn":
            action = "zz99" if mode == "illegal" and games == 2 else msg["legal"][0]
            send({"type": "move", "actions": [action]})
        elif msg["type"] == "end" and mode == "garbage":
            send({"type": "move", "actions": ["a1"]})
    """
)


def script_bot(tmp_path: Path, mode: str = ""):
    script = tmp_path / "sess_bot.py"
    script.write_text(BOT)
    return bot_from_command(f"json:{sys.executable} {script} {mode}".strip())


def config(bots, pool: SessionPool | None, seed: int = 1) -> MatchConfig:
    return MatchConfig(
        game="papagra",
        options={"board": "hex 3", "max_turns": "4"},
        bots=bots,
        time_control=TC,
        seed=seed,
        sessions=pool,
    )


def pids(record) -> list[str]:
    """The pid each seat's process reported on stderr in this game."""
    return [line.split(" pid ")[1].split()[0] for line in record.stderr if " pid " in line]


def cpu_limit_line(pid: int) -> str:
    limits = Path(f"/proc/{pid}/limits").read_text()
    return next(x for x in limits.splitlines() if x.startswith("Max cpu time"))


def process_state(pid: int) -> str:
    """The state letter of /proc/PID/stat (T: stopped), once the process (our child) has
    stopped: a signal is delivered asynchronously, waitid waits for it (without reaping)."""
    os.waitid(os.P_PID, pid, os.WSTOPPED | os.WNOWAIT)
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def state_now(pid: int) -> str:
    """The state letter of /proc/PID/stat as it is now (no waiting)."""
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def play_games(bots_per_game, pool_games=True):
    """Play the games in order with one pool; the records, the pool's counts and the pids of
    the processes left idle (all of them dead once the pool is closed)."""
    out: dict = {}

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            pool = SessionPool(nursery) if pool_games else None
            records = []
            for i, bots in enumerate(bots_per_game):
                records.append(await play_match(config(bots, pool, seed=i + 1)))
            out["records"] = records
            if pool is not None:
                out["started"], out["reused"] = pool.started, pool.reused
                out["idle"] = [s.proc.pid for s in pool.idle]  # type: ignore[attr-defined]
                out["idle_states"] = [state_now(pid) for pid in out["idle"]]
                await pool.aclose()

    trio.run(main)
    return out


def test_a_kept_process_plays_the_next_game(tmp_path):
    bot = script_bot(tmp_path)
    out = play_games([(bot, bot)] * 3)
    r1, _r2, r3 = out["records"]
    for r in out["records"]:
        assert r.result["reason"] == "max_turns", r.result
        assert (
            r.exits
            == [{"returncode": None, "signal": None, "exited_after_end": None, "kept": True}] * 2
        )
    assert [r["session_game"] for r in r1.ready] == [1, 1]
    assert [r["session_game"] for r in r3.ready] == [3, 3]
    assert out["started"] == 2 and out["reused"] == 4
    # the record keeps each game's own stderr only
    assert all(s.startswith("game 3 pid") for s in r3.stderr), r3.stderr
    assert sorted(pids(r1)) == sorted(pids(r3))
    # the same two processes played game after game: never stopped (no signal per game);
    # closing the pool ends them
    assert "T" not in out["idle_states"], out["idle_states"]
    assert not any(alive(pid) for pid in out["idle"])


def test_idle_processes_are_stopped_while_a_game_without_them_plays(tmp_path):
    """A kept process not taken by the game in play is stopped (SIGSTOP) before its first
    turn, and continued by the game that takes it again."""
    a = script_bot(tmp_path)
    c = load_bot(ROOT / "bots" / "random-c")
    seen: list[list[str]] = []

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            pool = SessionPool(nursery)
            await play_match(config((a, a), pool))
            kept = [s.proc.pid for s in pool.idle]  # type: ignore[attr-defined]

            def observer(event) -> None:
                if not seen:
                    seen.append([process_state(pid) for pid in kept])

            await play_match(config((c, c), pool, seed=2), observer=observer)
            record = await play_match(config((a, a), pool, seed=3))
            assert [r["session_game"] for r in record.ready] == [2, 2]
            assert record.result["reason"] == "max_turns", record.result
            assert sorted(pids(record)) == sorted(map(str, kept))
            await pool.aclose()

    trio.run(main)
    assert seen == [["T", "T"]]


def test_a_bot_without_sessions_is_started_per_game(tmp_path):
    bot = script_bot(tmp_path, "nosess")
    out = play_games([(bot, bot)] * 2)
    for r in out["records"]:
        assert [e["exited_after_end"] for e in r.exits] == [True, True]
        assert [r["sessions"] for r in r.ready] == [False, False]
    assert out["started"] == 4 and out["reused"] == 0


def test_a_forfeit_ends_the_session(tmp_path):
    bot = script_bot(tmp_path, "illegal")
    out = play_games([(bot, bot)] * 3)
    _r1, r2, r3 = out["records"]
    assert r2.result["reason"] == "illegal_action"
    assert "kept" not in r2.exits[0] and "kept" not in r2.exits[1]
    # both processes of the failed game were ended: game 3 starts two fresh ones
    assert [r["session_game"] for r in r3.ready] == [1, 1]
    assert out["started"] == 4


def test_output_between_games_retires_the_process_not_the_next_game(tmp_path):
    bot = script_bot(tmp_path, "garbage")
    out = play_games([(bot, bot)] * 2)
    _r1, r2 = out["records"]
    assert r2.result["reason"] == "max_turns", r2.result  # the next game is not blamed
    assert [r["session_game"] for r in r2.ready] == [1, 1]
    assert out["started"] == 4


def test_processes_are_never_shared_between_bot_versions(tmp_path):
    a = script_bot(tmp_path)
    c = load_bot(ROOT / "bots" / "random-c")
    out = play_games([(a, a), (c, c), (a, c)])
    r3 = out["records"][2]
    # game 3 reuses one process of each bot: the right program behind each seat
    assert [r["name"] for r in r3.ready] == ["sess", "random-c"]
    assert [r["session_game"] for r in r3.ready] == [2, 2]


def test_a_process_that_cannot_afford_another_game_is_retired(tmp_path):
    """RLIMIT_CPU counts every game of a kept process: the pool renews it (prlimit) or, where
    that is not permitted, retires a process whose remaining limit is under a game's budget."""
    bot = script_bot(tmp_path)

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            pool = SessionPool(nursery)
            await play_match(config((bot, bot), pool))
            budget = TC.cpu_budget()
            for s in pool.idle:
                cpu_line = cpu_limit_line(s.proc.pid)  # type: ignore[attr-defined]
                assert int(cpu_line.split()[3]) in (budget, budget * SESSION_CPU_GAMES)
                s.cpu_limit = budget  # as if the process had used all but one game's budget
            before = {s.proc.pid for s in pool.idle}  # type: ignore[attr-defined]
            record = await play_match(config((bot, bot), pool, seed=2))
            assert record.result["reason"] == "max_turns"
            renewed = pool.reused == 2
            if renewed:  # the machine lets the arena raise a running bot's limit
                for s in pool.idle:
                    assert s.cpu_limit is not None and s.cpu_limit <= budget + 1 + s.cpu_seconds()
            else:
                assert pool.started == 4
                assert not any(alive(pid) for pid in before)
            await pool.aclose()

    trio.run(main)
