"""`arena play` through a pseudo-terminal: a real `python -m arena play` process, typed at like a
person would, against a real bot; then its record."""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys
import time

import pytest

from arena.referee import GameRecord

from .conftest import BOTS, ROOT

PROMPT = re.compile(r"red, turn (\d+) \(1 action\(s\) left\)> ")


class Terminal:
    """A process on the slave side of a pty; `expect` reads until a pattern shows up."""

    def __init__(self, argv: list[str]) -> None:
        self.master, slave = os.openpty()
        env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120"}
        self.proc = subprocess.Popen(
            argv, stdin=slave, stdout=slave, stderr=slave, cwd=ROOT, env=env, close_fds=True
        )
        os.close(slave)
        self.text = ""
        self.pos = 0  # what expect has consumed

    def expect(self, pattern: str | re.Pattern[str], timeout: float = 60.0) -> re.Match[str]:
        regex = re.compile(pattern) if isinstance(pattern, str) else pattern
        end = time.monotonic() + timeout
        while True:
            m = regex.search(self.text, self.pos)
            if m:
                self.pos = m.end()
                return m
            left = end - time.monotonic()
            assert left > 0, f"no {regex.pattern!r} within {timeout} s; got:\n{self.text}"
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    data = os.read(self.master, 65536)
                except OSError:  # EIO: the process closed the terminal
                    data = b""
                assert data, f"terminal closed before {regex.pattern!r}; got:\n{self.text}"
                self.text += data.decode("utf-8", errors="replace").replace("\r\n", "\n")

    def type(self, line: str) -> None:
        os.write(self.master, line.encode() + b"\n")

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, exc_type: object, *_: object) -> None:
        """The process is waited for (killed first when the test failed); its exit status is
        `status`."""
        if exc_type is not None:
            self.proc.kill()
        self.status = self.close()

    def close(self) -> int:
        try:
            return self.proc.wait(timeout=60)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            os.close(self.master)


def test_play_against_a_bot_in_a_terminal(tmp_path):
    record_path = tmp_path / "game.json"
    with Terminal(
        [sys.executable, "-m", "arena", "play", "stripes", str(BOTS / "random-py"),
         "--seed", "3", "--tc", "300+1", "--record", str(record_path)]
    ) as term:  # fmt: skip
        # the board, with coordinates, before the first move
        term.expect(r"a b c d e f g h i j k l m\n")
        term.expect(r"You play red against random-py \(300\+1\)")
        term.expect(r"Your turn 1; you have 300\.0 s\.")
        term.expect(PROMPT)
        # an illegal action is explained with the engine's words, then asked again
        term.type("zz9")
        term.expect(r"Illegal: zz9: zz9 is not on the 13x13 board\. Try again")
        assert term.expect(PROMPT).group(1) == "1"
        term.type("g7")
        term.expect(r"Illegal: g7: ")
        term.expect(PROMPT)
        played = []
        for turn in (1, 3):
            term.type("?")
            legal = term.expect(r"Legal actions: ([^\n]+(?:\n  [^\n]+)*)\n").group(1).split()
            assert legal and all(re.fullmatch(r"[a-m]\d+(-[a-m]\d+)?", a) for a in legal), legal
            term.expect(PROMPT)
            term.type(legal[0])
            played.append(legal[0])
            # both turns are shown with the board after them
            term.expect(rf"turn {turn}: red \(human\) {legal[0]}   \[")
            term.expect(r"turn \d+: blue \(random-py\) \S+   \[")
            term.expect(r"a b c d e f g h i j k l m\n")
            assert term.expect(PROMPT).group(1) == str(turn + 2)
        term.type("resign")
        term.expect(r"Game over\. You lose \(resign\)\.")
        term.expect(r"0-1  blue \(random-py\) wins by resign")
    assert term.status == 0, term.text
    record = GameRecord.load(record_path)
    assert record.result["reason"] == "resign" and record.result["winner"] == 1
    assert record.bots[0]["kind"] == "human"
    assert [t["actions"][0]["action"] for t in record.turns[:-1] if t["seat"] == 0] == played
    assert record.turns[-1]["resigned"] is True
    *_, (_, state) = record.replay_states()
    assert state.describe() == record.final_position


def test_play_rejects_bad_input_before_the_game():
    out = subprocess.run(
        [sys.executable, "-m", "arena", "play", "chess", str(BOTS / "random-py")],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 2
    assert out.stderr.startswith("arena: error: unknown game 'chess'")


def test_play_honours_the_time_control():
    with Terminal(
        [sys.executable, "-m", "arena", "play", "wrigglers", str(BOTS / "random-py"),
         "--seat", "1", "--move-time", "0.5", "--seed", "2"]
    ) as term:  # fmt: skip
        term.expect(r"You play light against random-py \(0\.5s/turn\)")
        term.expect(r"Your turn 2; you have 0\.5 s\.")
        term.expect(r"light, turn 2 \(1 action\(s\) left\)> ")
        # nothing typed: the referee's clock runs out, as for a bot
        term.expect(r"Game over\. You lose \(time_forfeit\)\.")
        term.expect(r"1-0  dark \(random-py\) wins by time_forfeit")
    assert term.status == 0, term.text


def test_a_person_sees_their_time_bank_and_runs_it_down():
    """issue 22.5: a person's seat has the bots' time bank too: the prompt says what is left,
    and a person who thinks past both loses on time, the bank ran out."""
    with Terminal(
        [sys.executable, "-m", "arena", "play", "wrigglers", str(BOTS / "random-py"),
         "--seat", "1", "--move-time", "0.3", "--bank", "0.4", "--seed", "2"]
    ) as term:  # fmt: skip
        term.expect(r"You play light against random-py \(0\.3s/turn, bank 0\.4s\)")
        term.expect(r"Your turn 2; you have 0\.3 s and 0\.4 s in your time bank\.")
        term.expect(r"Game over\. You lose \(time_forfeit\)\.")
        term.expect(r"the time bank ran out \(0\.300 s for the move and 0\.400 s left")
    assert term.status == 0, term.text


@pytest.mark.parametrize("stdin", ["devnull", "file"])
def test_play_from_a_file_or_dev_null_resigns_when_the_input_ends(tmp_path, stdin):
    """Input that is not a terminal (epoll refuses files and /dev/null) still works: the moves
    in it are played, and its end resigns."""
    moves = tmp_path / "moves.txt"
    moves.write_text("f5-f6\n")
    source = os.devnull if stdin == "devnull" else moves
    with open(source, "rb") as f:
        out = subprocess.run(
            [sys.executable, "-m", "arena", "play", "stripes", str(BOTS / "random-py"),
             "--seed", "1"],
            stdin=f, cwd=ROOT, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "red (human) resigned: input closed" in out.stdout
    turns = "1 turns" if stdin == "devnull" else "3 turns"
    assert "wins by resign; scores" in out.stdout and turns in out.stdout
