"""How many bytes wait unread in a pipe, asked where a read would nearly always find none.

The referee looks into a bot's pipes on every turn (its stdout before a request, for a move
sent before it was asked for; its stderr before the turn's tag moves on), and nearly always
finds them empty. A non-blocking read of an empty pipe raises, which costs about three times
the FIONREAD ioctl that tells the same (1.5 us against 0.45 us here); the ioctl's answer
buffer is kept per caller, so that asking allocates nothing.
"""

from __future__ import annotations

import array
import fcntl
import termios


class PipeLevel:
    """`level(fd)`: the bytes waiting in the pipe `fd` (either end), -1 where it cannot be
    told (not a pipe, closed). End of file reads as 0: a read finds it."""

    __slots__ = ("_answer",)

    def __init__(self) -> None:
        self._answer = array.array("i", [0])

    def __call__(self, fd: int) -> int:
        try:
            fcntl.ioctl(fd, termios.FIONREAD, self._answer, True)
        except (OSError, ValueError, TypeError):
            return -1
        return self._answer[0]
