"""What this machine lets the process sandbox do (`Capabilities`), probed once per process:
a network namespace, a read-only mount namespace, the cgroups, and whether the arena is root.

Trio-free (like confine.py and zygote.py), so that a command can start the probes first
thing (`start_probes`), before it imports trio and the referee, and have their result
(`capabilities()`) once those imports are done: each probe is a child confined with one
layer, which runs `true` on another core meanwhile. A probe that was started and never
asked for is reaped, and its directory removed, when the process exits.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from arena.sandbox.cgroups import CgroupSystem, sweep_stale
from arena.sandbox.confine import Confinement, fork_child
from arena.sandbox.hostres import scratch_base, sweep_stale_scratch


@dataclass(frozen=True)
class Capabilities:
    """What this machine lets the process launcher do."""

    root: bool
    uids: bool = False  # a unique unprivileged uid per bot, no capabilities (arena is root)
    netns: bool = False  # a new, empty network namespace works here
    cgroups: CgroupSystem = field(default_factory=CgroupSystem)
    #: a mount namespace with everything read-only but the bot's private tmpfs works here
    mountns: bool = False

    def describe(self) -> str:
        return "; ".join(
            [
                f"cgroups: {self.cgroups.describe()}",
                "CPU capped per bot (limits.cpus)"
                if self.cgroups.cpu is not None
                else "CPU NOT capped per bot (no cgroup CPU controller)",
                "unique unprivileged uid per bot"
                if self.uids
                else "bots run as the arena's own user",
                "no network (network namespace)"
                if self.netns
                else "network NOT isolated (no network namespace)",
                "read-only filesystem but its temporary directory (mount namespace)"
                if self.mountns
                else "filesystem writable where its uid may write (no mount namespace)",
            ]
        )


class _Probe:
    """A child confined with some layers that execs `true`: it exits 0 exactly when the
    confinement and the exec worked here. Forked without waiting for it (the child confines
    itself and execs on its own, as a bot does, arena/sandbox/confine.py `exec_child`)."""

    def __init__(self, **layers: bool) -> None:
        self.pid: int | None = None
        self.status: int | None = None
        #: its directory could not be made: raised by `passed`, as an error of the machine's
        self.error: OSError | None = None
        try:
            self.scratch = tempfile.mkdtemp(prefix="arena-probe-")
        except OSError as exc:
            self.scratch, self.error = "", exc
            return
        try:
            plan = Confinement(os.getpid(), self.scratch, scratch=self.scratch, **layers)
            program = b"true"
            candidates = tuple(os.path.join(os.fsencode(d), program) for d in os.get_exec_path())
            env = dict(os.environ)
            # its standard streams and its failure report (`true` says nothing) go nowhere
            null = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
            try:
                self.pid = fork_child(["true"], candidates, env, plan, (null, null, null), null)
            finally:
                os.close(null)
        except OSError:  # not forked: the layers are taken as not working
            self.close()

    def passed(self) -> bool:
        """Did the child start here (and exit cleanly)? Waits for it."""
        if self.error is not None:
            raise self.error
        if self.pid is not None and self.status is None:
            try:
                _, status = os.waitpid(self.pid, 0)
                self.status = os.waitstatus_to_exitcode(status)
            except ChildProcessError:
                self.status = -1
        self.close()
        return self.status == 0

    def close(self) -> None:
        if self.scratch:
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.scratch = ""


#: probes started ahead by `start_probes` (the pid of the process that started them, which
#: alone can wait for them; then the network probe, the mount probe)
_started: tuple[int, _Probe | None, _Probe | None] | None = None


def start_probes() -> None:
    """Start the probes of `capabilities()` now, without waiting for them. Call it from the
    main thread (a probe's parent-death signal is tied to the thread that forked it), once
    there is no other; a process that has its capabilities already starts none."""
    global _started
    if capabilities.cache_info().currsize or (_started and _started[0] == os.getpid()):
        return
    _started = (os.getpid(), *_new_probes())
    atexit.register(_reap_unused)


def _new_probes() -> tuple[_Probe | None, _Probe | None]:
    net = None if os.environ.get("ARENA_NO_NETNS") else _Probe(new_net=True)
    mount = None if os.environ.get("ARENA_NO_READONLY") else _Probe(new_mount=True)
    return net, mount


def _reap_unused() -> None:
    """At exit: probes that were started and never asked for leave nothing behind."""
    global _started
    if _started is not None and _started[0] == os.getpid():
        for probe in _started[1:]:
            if probe is not None:
                with contextlib.suppress(OSError):
                    probe.passed()
    _started = None


@functools.cache
def capabilities() -> Capabilities:
    """What the machine gives, probed once per process (a forked process inherits it: these
    are facts about the machine, not state): the probes `start_probes` started, or both
    started now, at once (each forks this process, and every process that plays games waits
    for them before its first bot); then the cgroups, and a sweep of what arenas that
    crashed earlier left behind."""
    global _started
    root = os.geteuid() == 0
    if _started is not None and _started[0] == os.getpid():
        net, mount = _started[1:]
    else:
        net, mount = _new_probes()
    _started = None
    netns = net is not None and net.passed()
    mountns = mount is not None and mount.passed()
    cgroups = CgroupSystem.detect()
    sweep_stale(cgroups)  # bots of arenas that crashed earlier
    for place in dict.fromkeys([Path(tempfile.gettempdir()), scratch_base(True)]):
        sweep_stale_scratch(place)
    return Capabilities(root, root, netns, cgroups, mountns)
