"""Helpers for the viewer tests: real games played for them, and a PNG reader (stdlib only)."""

from __future__ import annotations

import os
import struct
import sys
import zlib
from dataclasses import replace
from pathlib import Path

import trio

from arena.referee import GameRecord, MatchConfig, TimeControl, load_bot, play_match

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "bots"
HTMLBOT = Path(__file__).resolve().parent / "bots" / "htmlbot"
TESTBOT = ROOT / "tests" / "referee" / "bots" / "testbot.py"
HOSTILE_NAME = "<script>alert(1)</script>"
TC = TimeControl(startup=10.0, base=30.0, increment=0.5)


def misbehaving_bot(mode: str, fail_turn: int = 1):
    """The referee tests' misbehaving bot (tests/referee/bots/testbot.py) in MODE."""
    spec = load_bot(f"{sys.executable} {TESTBOT} {mode}")
    return replace(spec, name=f"test-{mode}", env=(("TESTBOT_FAIL_TURN", str(fail_turn)),))


def play(game: str, a, b, seed: int = 1, **options: str) -> GameRecord:
    """One real game between two bots (specs or paths), played in this process."""
    bots = tuple(load_bot(x) if isinstance(x, (str, Path)) else x for x in (a, b))
    config = MatchConfig(game, dict(options), bots, TC, seed=seed)  # type: ignore[arg-type]
    return trio.run(play_match, config)


def keep_screenshot(png: bytes, name: str) -> None:
    """Save a screenshot in $ARENA_SCREENSHOT_DIR when set, for a person to look at."""
    where = os.environ.get("ARENA_SCREENSHOT_DIR")
    if where:
        Path(where).mkdir(parents=True, exist_ok=True)
        (Path(where) / name).write_bytes(png)


def png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and the unfiltered rows of an 8-bit RGB or RGBA PNG (screenshots)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width, height, channels = 8, b"", 0, 0, 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and colour in (2, 6), (depth, colour)
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
    raw = zlib.decompress(idat)
    stride = width * channels
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        ftype, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b, c = prev[i], prev[i - channels] if i >= channels else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 255
            elif ftype == 2:
                line[i] = (line[i] + b) & 255
            elif ftype == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pred) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, rows


def distinct_colours(data: bytes, step: int = 7) -> int:
    """How many different pixel colours a sample of a PNG's pixels has."""
    width, height, rows = png_pixels(data)
    channels = len(rows[0]) // width
    seen = set()
    for y in range(0, height, step):
        row = rows[y]
        for x in range(0, width, step):
            seen.add(row[x * channels : x * channels + 3])
    return len(seen)
