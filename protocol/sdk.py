"""The Python bot SDK: write a bot as one function, the SDK speaks the arena protocol for it.

A bot is an ordinary program the referee starts as a subprocess and talks to over stdin/stdout
(`docs/protocol.md`). Everything except choosing a move is the same for every bot, so it lives
here: the framing (msgpack by default, JSON Lines when the manifest says `encoding = "json"`),
the `hello` -> `ready` handshake, turning the choose function's return value into a `move` or
`resign`, `log` messages, and a clean exit after `end`.

Two entry points:

    from protocol.sdk import run_bot

    def choose(turn, bot):               # turn: the `turn` message as a dict
        bot.log(f"{len(turn['legal'])} legal actions")
        bot.mark("e5", text="+3", colour="green")   # debug marks, drawn on the replay
        return bot.rng.choice(turn["legal"])  # a str, a list of str, Move(...) or Resign

    run_bot(choose, name="my-bot", version="1.0", author="me")

and, for bots that want the rules engine to think with (`arena` must be importable):

    from protocol.sdk import run_engine_bot

    def choose_turn(state, rng):         # state: arena.games.State, mid-turn if need be
        ...
        return ["e5", "-c3"]

    run_engine_bot(choose_turn, name="my-engine-bot")

The SDK uses plain blocking I/O on purpose: a bot is an ordinary sequential program, and the
referee only ever asks one question at a time, so there is nothing to be concurrent about.
"""

from __future__ import annotations

import inspect
import os
import random
import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from protocol.framing import ENCODINGS, Decoder, Encoder, ProtocolError
from protocol.messages import PROTOCOL_VERSION

#: what the SDK accepts from the referee before giving up on a message: the protocol's cap is
#: announced in `hello` (1 MiB by default) and binds both directions, but a bot has no reason
#: to be stricter with the referee than the referee is, so this only stops a runaway stream.
_MAX_INCOMING_BYTES = 64 << 20

#: the referee truncates each log message to 4 KiB; cutting it here saves the bytes on the pipe
_LOG_CAP = 4096


class Resign:
    """Return `Resign` (the class) or `Resign("why")` from a choose function to resign."""

    def __init__(self, reason: str = "") -> None:
        self.reason = reason

    def __repr__(self) -> str:
        return f"Resign({self.reason!r})"


@dataclass(frozen=True)
class Move:
    """An explicit reply: actions plus `more`, for bots that want optional actions as well.

    Plain lists are enough for almost every bot. `more=True` asks the referee to keep the turn
    open after these actions even when only optional actions remain (Papagra's extra removal),
    so the bot is sent another `turn` for it.
    """

    actions: tuple[str, ...]
    more: bool = False

    def __init__(self, actions: str | list[str] | tuple[str, ...], more: bool = False) -> None:
        if isinstance(actions, str):
            actions = (actions,)
        object.__setattr__(self, "actions", tuple(actions))
        object.__setattr__(self, "more", bool(more))


Reply = str | list[str] | tuple[str, ...] | Move | Resign | type[Resign]


class Channel:
    """Reads and writes protocol messages on two byte streams in one encoding.

    With `encoding=None` the encoding is detected from the first byte the referee sends: a JSON
    Lines stream starts with `{` (a msgpack map never does: fixmap is 0x80-0x8f, map16/32 are
    0xde/0xdf). That way one bot program works under either manifest setting without a flag.
    Replies always use the detected (or given) encoding. The bytes themselves are handled by
    `protocol.framing`, the same code the referee uses.
    """

    def __init__(self, inp: BinaryIO, out: BinaryIO, encoding: str | None = None) -> None:
        if encoding not in (None, *ENCODINGS):
            raise ValueError(f"unknown encoding {encoding!r} (valid: {', '.join(ENCODINGS)})")
        self._out = out
        self.encoding = encoding
        self._decoder: Decoder | None = None
        self._encoder: Encoder | None = None
        self._pending: deque[dict[str, Any]] = deque()
        self._head = b""  # bytes read before the encoding was known
        # `read1` returns as soon as some bytes are there; `read(n)` would block until n bytes
        # arrived, i.e. forever, since the referee waits for our reply before sending more.
        read1 = getattr(inp, "read1", None)
        if read1 is not None:
            self._read_chunk: Callable[[], bytes] = lambda: read1(65536)
        else:
            fd = inp.fileno()
            self._read_chunk = lambda: os.read(fd, 65536)

    def _start(self, encoding: str) -> None:
        self.encoding = encoding
        self._decoder = Decoder(encoding, _MAX_INCOMING_BYTES)
        self._encoder = Encoder(encoding)

    def set_max_message_bytes(self, cap: int) -> None:
        """Refuse to send what the referee would refuse, so the error names our own bug."""
        if self._encoder is not None:
            self._encoder.max_message_bytes = cap

    def read(self) -> dict[str, Any] | None:
        """The next message, or None when the referee closed our stdin."""
        while not self._pending:
            chunk = self._read_chunk()
            if not chunk:
                return None
            if self._decoder is None:
                if self.encoding is not None:
                    self._start(self.encoding)
                else:
                    self._head += chunk
                    first = self._head.lstrip()[:1]
                    if not first:
                        continue
                    self._start("json" if first == b"{" else "msgpack")
                    chunk, self._head = self._head, b""
            assert self._decoder is not None
            for msg in self._decoder.feed(chunk):
                if not isinstance(msg.get("type"), str):
                    raise ProtocolError(f"message without a string 'type': {msg!r:.200}")
                self._pending.append(msg)
        return self._pending.popleft()

    def write(self, msg: dict[str, Any]) -> None:
        """Send one message and flush, so the referee's clock stops as early as possible."""
        if self._encoder is None:
            self._start(self.encoding or "msgpack")
        assert self._encoder is not None
        self._out.write(self._encoder.encode(msg))
        self._out.flush()


# --- the bot's view of the game ---------------------------------------------------------------


@dataclass
class BotContext:
    """What a choose function gets besides the turn: the hello, a seeded RNG, logging, time.

    `rng` is seeded from the referee's `hello.seed` and the seat, so a bot that draws all its
    randomness from it plays the same game again for the same seed: tournaments of such bots
    are reproducible.
    """

    channel: Channel
    hello: dict[str, Any] = field(default_factory=dict)
    rng: random.Random = field(default_factory=random.Random)
    #: the current `turn` message and the monotonic time it was read, for `time_left`
    turn: dict[str, Any] | None = None
    turn_received: float = 0.0
    #: free for the bot's own state between turns (opening book, search tree, ...)
    memory: dict[str, Any] = field(default_factory=dict)
    #: debug marks `mark` gathered for the next `move` or `resign`
    marks: list[dict[str, Any]] = field(default_factory=list)

    @property
    def game(self) -> str:
        return self.hello.get("game", "")

    @property
    def options(self) -> dict[str, Any]:
        return self.hello.get("options", {}) or {}

    @property
    def bot_options(self) -> dict[str, Any]:
        """Settings for this bot from the tournament config (`hello.bot_options`, like UCI
        options); empty when none were given or the referee predates them."""
        value = self.hello.get("bot_options")
        return value if isinstance(value, dict) else {}

    @property
    def seat(self) -> int:
        return int(self.hello.get("seat", 0))

    @property
    def colour(self) -> str:
        return self.hello.get("colour", "")

    @property
    def seed(self) -> int:
        return int(self.hello.get("seed", 0))

    def log(self, message: str, marks: list[dict[str, Any]] | None = None) -> None:
        """Send a log line to the referee; it lands in the game record with seat, time and
        turn. `marks`: debug marks drawn with it (`mark_of`; docs/protocol.md)."""
        msg: dict[str, Any] = {"type": "log", "message": str(message)[:_LOG_CAP]}
        if marks:
            msg["marks"] = list(marks)
        self.channel.write(msg)

    def mark(
        self,
        cell: str | None = None,
        *,
        arrow: tuple[str, str] | None = None,
        text: str | None = None,
        colour: str | None = None,
    ) -> None:
        """Draw a debug mark on this turn's replay, sent with the reply to it: a cell
        highlighted (with a short `text`), or an `arrow` between two cells. The referee
        drops a mark that breaks a rule and says why in the bot's logs; it never costs
        the game (docs/protocol.md, "Debug marks")."""
        self.marks.append(mark_of(cell, arrow=arrow, text=text, colour=colour))

    @property
    def time_control(self) -> dict[str, Any]:
        """This bot's time control (`hello.time_control`): `move_time`, `base`, ..., and where
        the game has them `bank` (seconds per game a reply may run past its move time) and
        `first_move` (the time of this bot's first turn)."""
        value = self.hello.get("time_control")
        return value if isinstance(value, dict) else {}

    @property
    def bank(self) -> float:
        """Seconds left in this bot's time bank when the current turn was sent (`turn.banks`),
        0 without a bank: a reply may run this much past `deadline`, and what it runs past is
        taken from the bank for the rest of the game."""
        banks = self.turn.get("banks") if self.turn is not None else None
        if not isinstance(banks, list) or len(banks) != 2:
            return 0.0
        left = banks[self.seat]
        return float(left) if isinstance(left, int | float) else 0.0

    def time_left(self, bank: bool = False) -> float:
        """Seconds left for the current reply (the referee's deadline minus time spent here);
        with `bank=True` also what is left in the time bank (spending it is for the rare long
        think: it is never refilled).

        Measured from when the SDK finished reading the turn, so pipe latency is not counted;
        keep a safety margin. Infinite outside a turn or when the referee gave no deadline.
        """
        if self.turn is None or self.turn.get("deadline") is None:
            return float("inf")
        left = float(self.turn["deadline"]) - (time.monotonic() - self.turn_received)
        return left + self.bank if bank else left


def mark_of(
    cell: str | None = None,
    *,
    arrow: tuple[str, str] | None = None,
    text: str | None = None,
    colour: str | None = None,
) -> dict[str, Any]:
    """One debug mark as the protocol writes it (`BotContext.mark`, `log(..., marks=)`)."""
    mark: dict[str, Any] = {"arrow": list(arrow)} if arrow is not None else {"cell": cell}
    if text is not None:
        mark["text"] = str(text)
    if colour is not None:
        mark["colour"] = colour
    return mark


def default_name() -> str:
    """The bot's directory name (`bots/my-bot/bot.py` -> `my-bot`), the usual bot name."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if not path:
        return "python-bot"
    script = os.path.abspath(path)
    stem = os.path.splitext(os.path.basename(script))[0]
    parent = os.path.basename(os.path.dirname(script))
    return parent if stem in ("bot", "main", "__main__") and parent else stem


def seeded_rng(seed: int, seat: int) -> random.Random:
    """The RNG a bot should use for seed `seed` in seat `seat` (different per seat)."""
    return random.Random(f"{seed}/{seat}")


# --- the loop ---------------------------------------------------------------------------------


def _takes_context(choose: Callable[..., Any]) -> bool:
    """Whether `choose` wants the context as second argument; `choose(turn)` is fine too."""
    return _positional_arity(choose) >= 2


def _reply_message(reply: Any) -> dict[str, Any]:
    """Turn what a choose function returned into a `move` or `resign` message."""
    if reply is Resign or isinstance(reply, Resign):
        reason = reply.reason if isinstance(reply, Resign) else ""
        return {"type": "resign", "reason": reason} if reason else {"type": "resign"}
    if isinstance(reply, Move):
        actions, more = list(reply.actions), reply.more
    elif isinstance(reply, str):
        actions, more = [reply], False
    elif isinstance(reply, list | tuple):
        actions, more = [str(a) for a in reply], False
    else:
        raise TypeError(
            f"the choose function returned {reply!r:.100}; expected a str, a list of str, "
            "a Move or Resign"
        )
    if not actions:
        raise ValueError("the choose function returned no action (a move needs at least one)")
    msg: dict[str, Any] = {"type": "move", "actions": actions}
    if more:
        msg["more"] = True
    return msg


def run_bot(
    choose: Callable[..., Reply],
    *,
    name: str | None = None,
    version: str = "1.0",
    author: str = "",
    legal: bool = True,
    encoding: str | None = None,
    on_hello: Callable[[BotContext], None] | None = None,
    on_end: Callable[[dict[str, Any], BotContext], None] | None = None,
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
    sessions: bool = True,
) -> int:
    """Play games over stdin/stdout; returns the exit status (0) once they are over.

    With `sessions` (the default) the bot tells the referee in `ready` that it can play
    several games in one process: where the operator allows it, a new `hello` follows `end`
    instead of the end of stdin, and every game starts with a fresh BotContext (new RNG from
    the new seed, empty `memory`). Module-level state of the bot's own survives between games:
    a bot that keeps some must pass `sessions=False`.

    `name` defaults to the bot's directory name (`bots/my-bot/bot.py` -> `my-bot`).
    `choose(turn, bot)` (or `choose(turn)`) is called for every `turn` message and returns the
    actions to play now: a single action, a list (the rest of the turn, or part of it: the
    referee sends another `turn` while mandatory actions remain), a `Move`, or `Resign`.
    `legal=True` asks the referee to list the legal actions in every turn (`turn["legal"]`).
    `encoding=None` detects msgpack or JSON Lines from the referee's first byte.
    An exception in `choose` ends the program with a traceback on stderr, which the referee
    shows as the tail of the crash report.
    """
    if stdout is None:
        # Anything the bot prints by mistake would corrupt the protocol stream: keep the real
        # stdout for protocol messages only and send print() output to stderr instead.
        stdout = sys.stdout.buffer
        sys.stdout.flush()
        sys.stdout = sys.stderr
    if name is None:
        name = default_name()
    channel = Channel(stdin if stdin is not None else sys.stdin.buffer, stdout, encoding)
    ctx = BotContext(channel)
    wants_ctx = _takes_context(choose)
    try:
        while True:
            msg = channel.read()
            if msg is None:
                return 0  # the referee went away; nothing left to do
            kind = msg["type"]
            if kind == "hello":
                ctx = BotContext(channel)  # every game starts afresh (sessions)
                ctx.hello = msg
                ctx.rng = seeded_rng(ctx.seed, ctx.seat)
                if isinstance(msg.get("max_message_bytes"), int):
                    channel.set_max_message_bytes(msg["max_message_bytes"])
                if on_hello is not None:
                    on_hello(ctx)
                channel.write(
                    {
                        "type": "ready",
                        "name": name,
                        "version": version,
                        "author": author,
                        "legal": legal,
                        "protocol": PROTOCOL_VERSION,
                        "sessions": sessions,
                    }
                )
            elif kind == "turn":
                ctx.turn = msg
                ctx.turn_received = time.monotonic()
                reply = choose(msg, ctx) if wants_ctx else choose(msg)
                out = _reply_message(reply)
                if ctx.marks:
                    out["marks"], ctx.marks = ctx.marks, []
                channel.write(out)
                ctx.turn = None
            elif kind == "end":
                if on_end is not None:
                    on_end(msg, ctx)
                if not sessions:
                    return 0
                # a session: the next `hello`, or the end of stdin
            # any other type: a newer referee's message we do not know; ignore it
    except BrokenPipeError:
        # the referee closed our stdout (game over, or it killed the game): not our failure
        return 0


def run_engine_bot(
    choose_turn: Callable[..., list[str] | str | Move | Resign | type[Resign]],
    *,
    name: str | None = None,
    version: str = "1.0",
    author: str = "",
    encoding: str | None = None,
    on_end: Callable[[dict[str, Any], BotContext], None] | None = None,
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
    sessions: bool = True,
) -> int:
    """`run_bot` for bots that think with the arena's own rules engine.

    Each turn the position is rebuilt with
    `make_game(hello.game, hello.options).state_from_description(turn.position)`, which also
    restores a half-played turn, and `choose_turn(state, rng)` (or `(state, rng, bot)`) returns
    the actions to play, normally the whole rest of the turn. The state is the bot's own copy;
    it may apply actions to it while searching.
    """
    from arena.games import make_game  # only engine bots need the arena package

    wants_ctx = _positional_arity(choose_turn) >= 3

    def on_hello(ctx: BotContext) -> None:
        ctx.memory["game"] = make_game(ctx.game, ctx.options)

    def choose(turn: dict[str, Any], ctx: BotContext) -> Any:
        state = ctx.memory["game"].state_from_description(turn["position"])
        return choose_turn(state, ctx.rng, ctx) if wants_ctx else choose_turn(state, ctx.rng)

    return run_bot(
        choose,
        name=name,
        version=version,
        author=author,
        legal=False,  # the engine knows the legal actions; spare the referee the list
        encoding=encoding,
        on_hello=on_hello,
        on_end=on_end,
        stdin=stdin,
        stdout=stdout,
        sessions=sessions,
    )


def _positional_arity(fn: Callable[..., Any]) -> int:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return 2
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return 99
    return len([p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)])


__all__ = [
    "PROTOCOL_VERSION",
    "BotContext",
    "Channel",
    "Move",
    "ProtocolError",
    "Resign",
    "default_name",
    "mark_of",
    "run_bot",
    "run_engine_bot",
    "seeded_rng",
]
