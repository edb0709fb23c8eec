"""Any position into any bot: `arena replay FILE --at TURN[.ACTION]` (the moment, `--bot`,
`--messages`) and openings that end in the middle of a turn.

Every game here is a real one (bundled bots, the purpose-built test bot), and the messages of
a moment are compared byte for byte with what the referee wrote to a bot's stdin in the game
(the test bot's `dump` mode keeps every byte it read).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import msgpack
import pytest

from arena.errors import ArenaError
from arena.games import make_game
from arena.referee import GameRecord, MatchConfig, TimeControl, play_match
from arena.referee.moments import find_moment, opening_before
from arena.sandbox import Limits
from arena.tournaments.openings import format_opening

from .conftest import ROOT, TESTBOT, bundled, tbot

TC = TimeControl(startup=20.0, base=30.0, increment=0.1)
#: room on stderr for what the dumping test bot read (base64 lines)
ROOMY = Limits(stderr_bytes=8 << 20)


def arena(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "arena", *args],
        capture_output=True,
        input=stdin,
        timeout=240,
        cwd=ROOT,
    )


async def recorded(tmp_path: Path, game: str, bots: tuple, **kw) -> tuple[GameRecord, Path]:
    options = kw.pop("options", {})
    record = await play_match(
        MatchConfig(game=game, options=options, bots=bots, time_control=TC, limits=ROOMY, **kw)
    )
    path = tmp_path / f"{game}.json"
    record.write(path)
    return record, path


def turn_entry(record: GameRecord, turn: int) -> dict:
    return next(t for t in record.turns if t["turn"] == turn)


def dumped(record: GameRecord, seat: int = 1) -> bytes:
    """What the test bot in `dump` mode read from its stdin, from its stderr."""
    import base64

    lines = record.stderr[seat].splitlines()
    return b"".join(base64.b64decode(x[5:]) for x in lines if x.startswith("DUMP "))


def split_messages(data: bytes, encoding: str) -> list[bytes]:
    """The byte stream a bot read, cut into its messages exactly as they were written."""
    if encoding == "json":
        return data.splitlines(keepends=True)
    unpacker = msgpack.Unpacker(raw=False)
    unpacker.feed(data)
    out, start = [], 0
    for _ in unpacker:
        end = unpacker.tell()
        out.append(data[start:end])
        start = end
    return out


def decode(chunk: bytes, encoding: str) -> dict:
    return json.loads(chunk) if encoding == "json" else msgpack.unpackb(chunk, raw=False)


# --- the moment as text ---------------------------------------------------------------------
@pytest.mark.parametrize(("game", "turn"), [("papagra", 6), ("quadraphages", 4)])
async def test_at_shows_a_full_turn_and_a_mid_turn_moment(tmp_path, game, turn) -> None:
    record, path = await recorded(tmp_path, game, (bundled("random-py"), bundled("random-py")))
    entry = turn_entry(record, turn)
    acts = [a["action"] for a in entry["actions"]]
    assert len(acts) >= 2
    colour = record.bots[entry["seat"]]["colour"]

    full = arena("replay", str(path), "--at", str(turn))
    assert full.returncode == 0, full.stderr
    text = full.stdout.decode()
    assert f"turn {turn}: {colour} (random-py, seat {entry['seat']}) to move" in text
    assert "played this turn: -;" in text
    assert f"the record: {colour} was asked and played {acts[0]} in " in text
    state = find_moment(record, turn, 1).state
    assert state.render_text() in text
    after = record.turns[record.turns.index(entry) - 1]["clocks_after"]
    assert f"clocks {record.bots[0]['colour']} {after[0]:.3f} | " in text

    mid = arena("replay", str(path), "--at", f"{turn}.2")
    assert mid.returncode == 0, mid.stderr
    text = mid.stdout.decode()
    assert f"turn {turn}, before action 2: {colour}" in text
    assert f"played this turn: {acts[0]}; actions remaining" in text
    assert f"the record: {colour} was asked and played {acts[1]} in " in text
    scores = "-".join(map(str, find_moment(record, turn, 2).state.scores()))
    assert f"scores {scores};" in text


async def test_at_errors_are_one_line(tmp_path) -> None:
    _, path = await recorded(tmp_path, "papagra", (bundled("random-py"), bundled("random-py")))
    for at, words in [
        ("x", "--at: expected TURN or TURN.ACTION"),
        ("0", "--at: expected TURN or TURN.ACTION"),
        ("3.0", "--at: expected TURN or TURN.ACTION"),
        ("100000", "--at 100000: the record has no turn 100000"),
        ("2.3", "--at 2.3: the record has no such moment"),
    ]:
        got = arena("replay", str(path), "--at", at)
        err = got.stderr.decode()
        assert got.returncode == 2 and words in err, (at, err)
        assert len(err.strip().splitlines()) == 1
    got = arena("replay", str(path), "--messages")
    assert got.returncode == 2 and "--messages needs --at" in got.stderr.decode()


# --- the messages, byte for byte ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("game", "encoding"),
    [("papagra", "msgpack"), ("papagra", "json"), ("quadraphages", "msgpack")],
)
async def test_messages_are_what_the_referee_sent(tmp_path, game, encoding) -> None:
    bots = (bundled("random-py"), tbot("dump", encoding=encoding))
    record, path = await recorded(tmp_path, game, bots)
    sent = split_messages(dumped(record), encoding)
    hello = sent[0]
    assert decode(hello, encoding)["type"] == "hello"
    requests = [(decode(c, encoding), c) for c in sent[1:]]
    checked = 0
    for entry in record.turns[1:9]:
        if entry["seat"] != 1:
            continue
        for n in range(1, entry["requests"] + 1):
            # the n-th request of the turn: before its n-th action (one action per reply)
            chunk = next(
                c
                for m, c in requests
                if m["type"] == "turn"
                and m["turn"] == entry["turn"]
                and len(m["turn_actions"]) == n - 1
            )
            at = str(entry["turn"]) if n == 1 else f"{entry['turn']}.{n}"
            got = arena("replay", str(path), "--at", at, "--messages", "--encoding", encoding)
            assert got.returncode == 0, got.stderr
            assert got.stdout == hello + chunk, at
            checked += 1
    assert checked >= 4


async def test_messages_take_the_bots_encoding_and_pipe_into_a_bot(tmp_path) -> None:
    record, path = await recorded(tmp_path, "papagra", (bundled("random-py"), bundled("random-py")))
    bot = ROOT / "bots" / "random-c"
    json_bytes = arena("replay", str(path), "--at", "4.2", "--messages", "--bot", str(bot))
    assert json_bytes.returncode == 0
    lines = json_bytes.stdout.splitlines()
    assert [json.loads(x)["type"] for x in lines] == ["hello", "turn"]  # random-c speaks JSON
    default = arena("replay", str(path), "--at", "4.2", "--messages")
    assert default.stdout[:1] != b"{"  # msgpack, the protocol's default
    answer = subprocess.run(  # noqa: ASYNC221 (a test: blocking is fine)
        [sys.executable, str(ROOT / "bots" / "random-py" / "bot.py")],
        input=default.stdout,
        capture_output=True,
        timeout=60,
    )
    replies = list(msgpack.Unpacker(__import__("io").BytesIO(answer.stdout), raw=False))
    assert [r["type"] for r in replies] == ["ready", "move"]
    state = find_moment(record, 4, 2).state
    assert replies[1]["actions"][0] in state.legal_actions()


# --- the moment asked of a bot -----------------------------------------------------------------
async def test_bot_answers_a_mid_turn_moment(tmp_path) -> None:
    record, path = await recorded(tmp_path, "papagra", (bundled("random-py"), bundled("random-py")))
    got = arena("replay", str(path), "--at", "6.2", "--bot", str(ROOT / "bots" / "random-py"))
    text = got.stdout.decode()
    assert got.returncode == 0, (text, got.stderr)
    assert "asking random-py" in text and "ready as 'random-py' 1.0, legal requested" in text
    answer = next(line for line in text.splitlines() if line.startswith("  answer: "))
    action = answer.split()[1]
    assert action in find_moment(record, 6, 2).state.legal_actions()
    assert text.rstrip().endswith("legal there")


async def test_bot_with_a_fixed_answer_is_judged_by_the_engine(tmp_path) -> None:
    record, path = await recorded(tmp_path, "papagra", (bundled("random-py"), bundled("random-py")))
    played = turn_entry(record, 6)["actions"][1]["action"]
    fixed = f"{sys.executable} {TESTBOT} fixed"
    legal = arena("replay", str(path), "--at", "6.2", "--bot", f"{fixed} {played}")
    assert legal.returncode == 0, legal.stdout
    assert f"  answer: {played} in " in legal.stdout.decode()
    illegal = arena("replay", str(path), "--at", "6.2", "--bot", f"{fixed} zz99")
    text = illegal.stdout.decode()
    assert illegal.returncode == 1
    assert "  ILLEGAL there: zz99: " in text
    crash = arena(
        "replay", str(path), "--at", "6", "--bot", f"{sys.executable} {TESTBOT} crash_at_start"
    )
    text = crash.stdout.decode()
    assert crash.returncode == 1 and b"Traceback" not in crash.stderr
    assert "  FAIL failed_start: before ready: stdout closed: exited with status 7" in text
    assert "     stderr: cannot load my weights" in text


# --- openings that end mid-turn ------------------------------------------------------------------
def partial_opening(game: str, options: dict, extra: int) -> list[list[str]]:
    """The first turn complete, then `extra` actions of the second (random legal ones)."""
    state = make_game(game, options).new_initial_state()
    out: list[list[str]] = [[]]
    while state.turn_number() == 1:
        action = sorted(state.legal_actions())[0]
        state.apply(action)
        out[0].append(action)
    out.append([])
    for _ in range(extra):
        action = sorted(state.legal_actions())[-1]
        state.apply(action)
        out[1].append(action)
    assert state.turn_number() == 2
    return out


@pytest.mark.parametrize(("game", "extra"), [("papagra", 1), ("quadraphages", 2), ("hexaphage", 3)])
async def test_an_opening_may_end_mid_turn(tmp_path, game, extra) -> None:
    opening = partial_opening(game, {}, extra)
    bots = (bundled("random-py"), tbot("dump"))
    record, _ = await recorded(
        tmp_path, game, bots, opening=tuple(tuple(t) for t in opening), seed=5
    )
    assert record.opening == opening  # as given: the partial turn too
    first = [m for m in split_messages(dumped(record), "msgpack")[1:]]
    request = msgpack.unpackb(first[0], raw=False)
    assert request["turn"] == 2 and request["turn_actions"] == opening[1]
    assert request["last_turn"] == {"seat": 0, "actions": opening[0]}
    assert record.turns[0]["turn"] == 2 and record.turns[0]["seat"] == 1
    assert record.initial_state().turn_actions() == opening[1]  # the turn went on
    assert all(state is not None for _, state in record.replay_states())  # and replays
    assert record.turn_count == len(record.opening) + len(record.turns) - 1
    # the moment inside the opening and the bots' first one are both there
    assert find_moment(record, 2, 1).in_opening
    assert find_moment(record, 2, extra + 1).asked


async def test_an_opening_goes_on_with_optional_actions(tmp_path) -> None:
    options = {"extra_removals": 2}
    opening = partial_opening("papagra", options, 2)
    state = make_game("papagra", options).new_initial_state()
    for t in opening:
        for a in t:
            state.apply(a)
        if state.turn_number() == 1:
            continue
    assert state.can_end_turn()
    marked = (tuple(opening[0]), (*opening[1], "..."))
    record, _ = await recorded(
        tmp_path,
        "papagra",
        (bundled("random-py"), tbot("dump")),
        opening=marked,
        options=options,
    )
    request = msgpack.unpackb(split_messages(dumped(record), "msgpack")[1], raw=False)
    assert request["turn"] == 2 and request["can_end_turn"] is True
    assert request["turn_actions"] == opening[1]
    assert record.opening[1][-1] == "..."
    list(record.replay_states())
    # without the mark the turn ends where it may, as before
    plain, _ = await recorded(
        tmp_path,
        "papagra",
        (bundled("random-py"), bundled("random-py")),
        opening=tuple(tuple(t) for t in opening),
        options=options,
    )
    assert plain.turns[0]["turn"] == 3
    with pytest.raises(ArenaError, match=r"opening turn 1: \.\.\. may only end the last turn"):
        await recorded(
            tmp_path,
            "papagra",
            (bundled("random-py"), bundled("random-py")),
            opening=((*opening[0], "..."), tuple(opening[1])),
            options=options,
        )


async def test_opening_before_a_moment_restarts_there(tmp_path) -> None:
    record, _ = await recorded(
        tmp_path, "quadraphages", (bundled("random-py"), bundled("random-py"))
    )
    moment = find_moment(record, 5, 3)
    opening = opening_before(moment)
    assert len(opening) == 5 and len(opening[-1]) == 2
    again, _ = await recorded(
        tmp_path,
        "quadraphages",
        (bundled("random-py"), bundled("random-py")),
        opening=tuple(tuple(t) for t in opening),
    )
    assert again.initial_state().describe() == moment.state.describe()
    assert format_opening(again.opening) == format_opening(opening)
