"""The bot spawner: a small process that forks the bots on the arena's behalf.

Why: a fork copies the page tables of the process that forks and write-protects every page of
it, so the arena (tens of megabytes of Python heap) paid for each bot it started twice: the
copy, then one page fault per page it wrote afterwards (about 800 per bot in a tournament
worker), and the forked child paid a fault for every page it touched before its exec. This
process imports only the confinement code (no trio, no referee): its forks are cheap, and it
writes almost nothing between them.

How: the arena sends a request (the command, its environment, the `Confinement` plan,
pickled) with the child's ends of its pipes (SCM_RIGHTS) on a SOCK_SEQPACKET socket; the
spawner clones with CLONE_PARENT, so the bot is the arena's own child exactly as with a fork
of its own: the arena waits for it, reaps it, gets its SIGCHLD, and the bot's parent-death
signal is tied to the arena, not to this process (whose death then costs the arena nothing:
the next start simply forks itself). The child confines itself and execs
(`confine.exec_child`) as it always did; the arena awaits the outcome on the report pipe it
passed. The reply is the pid, on a socket private to the request.

It starts in the background: until it says it is ready, the arena forks its bots itself,
so a single game (`arena match`) never waits for it. The spawner serves the arena thread that
started it only (the bot's parent-death signal
fires when the thread that forked its parent exits; see arena/sandbox/spawner.py). It exits
when the arena closes its socket, or dies (SIGKILL as parent-death signal).
"""

from __future__ import annotations

import array
import contextlib
import ctypes
import dataclasses
import gc
import os
import pickle
import signal
import socket
import sys

from arena.sandbox.confine import (
    PR_SET_PDEATHSIG,
    Confinement,
    drop_bounding_set,
    exec_child,
    libc,
    prctl,
)

CLONE_PARENT = 0x00008000
#: clone(2)'s number where its first argument is the flags and the others may all be 0
SYS_CLONE = {"x86_64": 56, "aarch64": 220, "riscv64": 220, "ppc64le": 120, "s390x": 120}
#: the spawner's one message on its socket: it serves from now on
READY = b"ready"
#: the most file descriptors one request carries: reply socket, stdin, stdout, stderr,
#: report pipe, network namespace
MAX_FDS = 6


def clone_number() -> int | None:
    """clone(2)'s system call number here, None where the spawner is not used."""
    return SYS_CLONE.get(os.uname().machine)  # platform.machine(), without its import


def send_request(sock: socket.socket, payload: bytes, fds: list[int]) -> None:
    sock.sendmsg([payload], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])


def _receive(sock: socket.socket) -> tuple[bytes, list[int]]:
    fds = array.array("i")
    # close-on-exec, like the arena's own ends: the report pipe must close at the bot's exec
    space = socket.CMSG_SPACE(MAX_FDS * fds.itemsize)
    msg, ancdata, _flags, _addr = sock.recvmsg(1 << 20, space, socket.MSG_CMSG_CLOEXEC)
    for level, kind, data in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(data[: len(data) - (len(data) % fds.itemsize)])
    return msg, list(fds)


def serve(sock: socket.socket, number: int) -> None:
    """Fork a bot per request until the arena closes the socket."""
    lib = libc()
    clone = lib.syscall
    flags = ctypes.c_long(CLONE_PARENT | signal.SIGCHLD)
    zero = ctypes.c_long(0)
    bounding_set_empty = False
    while True:
        try:
            msg, fds = _receive(sock)
        except OSError:
            return
        if not msg:
            for fd in fds:
                os.close(fd)
            return
        reply = socket.socket(fileno=fds[0])
        try:
            argv, candidates, env, plan = pickle.loads(msg)
            assert isinstance(plan, Confinement)
            std = (fds[1], fds[2], fds[3])
            report = fds[4]
            if plan.drop_capabilities and not bounding_set_empty:
                # once for all the bots: this process never execs, and what it forks may
                # then gain no capability at its exec (41 prctl calls less per bot)
                drop_bounding_set(plan.cap_last)
                bounding_set_empty = True
            changes: dict[str, object] = {"bounding_set_empty": bounding_set_empty}
            if len(fds) > 5:
                changes["netns_fd"] = fds[5]
            plan = dataclasses.replace(plan, **changes)
            pid = clone(ctypes.c_long(number), flags, zero, zero, zero, zero)
            if pid == 0:  # the bot: never returns
                exec_child(argv, candidates, env, plan, std, report)
            answer = str(pid) if pid > 0 else f"error:{ctypes.get_errno()}"
        except Exception as exc:  # a bad request: say so, serve the next one
            answer = f"error:0:{exc}"
        finally:
            for fd in fds[1:]:
                os.close(fd)
        with contextlib.suppress(OSError):
            reply.send(answer.encode())
        reply.close()


def main() -> None:
    """`python -S -c 'from arena.sandbox.zygote import main; main()' FD ARENA_PID`."""
    fd, arena = int(sys.argv[1]), int(sys.argv[2])
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != arena:
        return  # the arena died before the signal was armed
    number = clone_number()
    if number is None:
        return
    sock = socket.socket(fileno=fd)
    libc()  # the C library's functions looked up before the first request
    # no collection here or in a forked child before its exec: one would touch (and so copy)
    # every object of this process; the loop makes no reference cycles
    gc.disable()
    gc.freeze()
    sock.send(READY)  # until then the arena forks its bots itself
    serve(sock, number)
