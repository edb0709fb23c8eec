"""The `docker` isolation mode: one container per bot per game, through the docker SDK.

The container gets no network, memory equal to memory+swap, a pids limit, a CPU quota
(`Limits.cpus`, as in process mode: no bot takes the cores of another game's bots), a
read-only root with a small tmpfs on /tmp, no capabilities, no_new_privs, a non-root user and
an init process (so the bot is not pid 1 and orphans are reaped). It is removed after the
game whatever happened.

The protocol runs over the container's attach socket: attached before the container starts
(so no early output is lost), with stdin, stdout and stderr multiplexed into 8-byte-header
frames (no TTY). The socket is handed to trio as a `SocketStream`; one task demultiplexes it
into the bot's stdout stream and the bounded stderr ring. Every docker SDK call blocks, so
each runs in `trio.to_thread.run_sync`.
"""

from __future__ import annotations

import contextlib
import os
import socket
import struct
from typing import Any

import trio

from arena.sandbox.base import (
    DEFAULT_PATH,
    BotProcess,
    ExitInfo,
    Launcher,
    LaunchError,
    LaunchSpec,
    SandboxFault,
)
from arena.sandbox.cpuacct import CpuCounters, counters_of
from arena.sandbox.process import StderrRing

#: user for images that do not name a non-root user themselves (nobody:nogroup)
DEFAULT_USER = "65534:65534"
#: label put on every bot container, so leftovers of a crashed arena can be found and removed
LABEL = "arena.sandbox"
#: label naming the arena process that owns the container: "<hostname>:<pid>"
OWNER_LABEL = "arena.owner"


def owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def sweep_stale(client: Any) -> int:
    """Remove bot containers whose arena process (on this host) is gone: an arena killed with
    SIGKILL cannot remove its containers itself. Returns how many were removed."""
    host = socket.gethostname()
    removed = 0
    try:
        containers = client.api.containers(all=True, filters={"label": OWNER_LABEL})
    except Exception:
        return 0
    for c in containers:
        own_host, _, pid = (c.get("Labels") or {}).get(OWNER_LABEL, "").rpartition(":")
        if own_host != host or not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
            continue  # still running
        except ProcessLookupError:
            pass
        except PermissionError:
            continue
        with contextlib.suppress(Exception):
            client.api.remove_container(c["Id"], force=True, v=True)
            removed += 1
    return removed


#: seconds the daemon may take for one API call before the arena gives up (arena's fault)
API_TIMEOUT = 60


def _client() -> Any:
    try:
        import docker
    except ImportError as exc:  # pragma: no cover - docker is a dependency
        raise SandboxFault("docker mode needs the docker Python SDK") from exc
    try:
        client = docker.from_env(timeout=API_TIMEOUT)
        client.ping()
    except Exception as exc:
        raise SandboxFault(f"docker mode: cannot reach the Docker engine: {exc}") from exc
    return client


def docker_available() -> str | None:
    """None if a Docker engine answers, else the reason it does not (for test skips)."""
    try:
        _client().close()
    except SandboxFault as exc:
        return str(exc)
    return None


class _StdoutStream(trio.abc.ReceiveStream):
    """The bot's stdout, fed by the demultiplexer through a small bounded channel.

    The bound gives back-pressure: a bot flooding stdout while the referee is not reading
    fills the channel, the demultiplexer stops reading the socket, the daemon's buffer fills
    and the bot blocks in write, so the referee's memory stays bounded.
    """

    def __init__(self, receive: trio.MemoryReceiveChannel[bytes]) -> None:
        self._receive = receive
        self._pending = b""
        self._eof = False

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        if not self._pending and not self._eof:
            try:
                self._pending = await self._receive.receive()
            except trio.EndOfChannel:
                self._eof = True
        if self._eof and not self._pending:
            return b""
        n = len(self._pending) if max_bytes is None else max_bytes
        data, self._pending = self._pending[:n], self._pending[n:]
        return data

    async def aclose(self) -> None:
        await self._receive.aclose()


class _StdinStream(trio.abc.SendStream):
    """The bot's stdin: the attach socket's sending half; closing it half-closes the socket
    (the daemon then closes the container's stdin, since it runs with stdin_once)."""

    def __init__(self, sock: trio.SocketStream) -> None:
        self._sock = sock
        self._closed = False

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        if self._closed:
            raise trio.ClosedResourceError("stdin was closed")
        await self._sock.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self._sock.wait_send_all_might_not_block()

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            await self._sock.send_eof()
        await trio.lowlevel.checkpoint()


class DockerBot(BotProcess):
    """One bot running in its own container."""

    def __init__(
        self, spec: LaunchSpec, client: Any, container_id: str, sock: trio.SocketStream
    ) -> None:
        self.spec = spec
        self._client = client
        self.container_id = container_id
        self._sock = sock
        send, receive = trio.open_memory_channel[bytes](8)
        self._stdout_send = send
        self.stdout = _StdoutStream(receive)
        self.stdin = _StdinStream(sock)
        self._stderr = StderrRing(spec.limits.stderr_bytes)
        self._demux_done = trio.Event()
        self._exited = trio.Event()
        self._exit: ExitInfo | None = None
        self._killed = False
        self._closed = False
        self._removed = False
        # waiting on a container blocks a thread for the whole game: give each its own
        # limiter so a big concurrent tournament cannot starve trio's shared thread pool
        self._wait_limiter = trio.CapacityLimiter(1)

    # -- tasks run in the caller's nursery ------------------------------------------------

    async def _demux(self) -> None:
        """Split the attach stream's frames: [type, 0, 0, 0, size (big-endian u32)] + data."""
        buf = bytearray()
        try:
            while True:
                while len(buf) < 8:
                    chunk = await self._sock.receive_some(65536)
                    if not chunk:
                        return
                    buf += chunk
                kind = buf[0]
                (size,) = struct.unpack(">I", bytes(buf[4:8]))
                del buf[:8]
                while size > 0:
                    if not buf:
                        chunk = await self._sock.receive_some(65536)
                        if not chunk:
                            return
                        buf += chunk
                    take = min(size, len(buf))
                    data = bytes(buf[:take])
                    del buf[:take]
                    size -= take
                    if kind == 2:
                        self._stderr.feed(data)
                    elif kind == 1:
                        with contextlib.suppress(trio.BrokenResourceError):
                            await self._stdout_send.send(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            return
        finally:
            self._demux_done.set()
            await self._stdout_send.aclose()

    async def _watch_exit(self) -> None:
        await self._reap()

    async def _reap(self) -> ExitInfo:
        if self._exit is None:
            code = await self._wait_container()
            if self._exit is None:
                oom = await trio.to_thread.run_sync(self._oom_killed)
                # with an init process, a bot killed by signal N exits 128+N
                if code is not None and code > 128:
                    info = ExitInfo(None, code - 128, oom, killed_by_arena=self._killed)
                else:
                    info = ExitInfo(code, None, oom, killed_by_arena=self._killed)
                self._exit = info
                self._exited.set()
        assert self._exit is not None
        return self._exit

    async def _wait_container(self) -> int | None:
        def wait() -> int | None:
            try:
                result = self._client.api.wait(self.container_id, timeout=None)
            except Exception:
                return None
            return int(result.get("StatusCode", -1))

        if self._exited.is_set():
            return None
        return await trio.to_thread.run_sync(
            wait, abandon_on_cancel=True, limiter=self._wait_limiter
        )

    def _oom_killed(self) -> bool:
        try:
            state = self._client.api.inspect_container(self.container_id)["State"]
        except Exception:
            return False
        return bool(state.get("OOMKilled"))

    # -- BotProcess ------------------------------------------------------------------------

    def stderr_tail(self) -> str:
        return self._stderr.text()

    def tag_stderr(self, tag: Any) -> None:
        # the attach stream carries stderr and stdout frames in the order they were written,
        # and the demux task feeds stderr before it passes on the reply that follows it
        self._stderr.retag(tag)

    def stderr_segments(self) -> list[tuple[Any, str]]:
        return self._stderr.segments()

    async def wait(self) -> ExitInfo:
        if self._exit is not None:
            return self._exit
        async with trio.open_nursery() as nursery:
            # either this call's own wait or the watcher's, whichever sees the exit first
            async def own() -> None:
                await self._reap()
                nursery.cancel_scope.cancel()

            async def watcher() -> None:
                await self._exited.wait()
                nursery.cancel_scope.cancel()

            nursery.start_soon(own)
            nursery.start_soon(watcher)
        assert self._exit is not None
        return self._exit

    def exit_info(self) -> ExitInfo | None:
        return self._exit

    async def kill(self) -> None:
        if self._exit is None:
            self._killed = True

        def kill() -> None:
            with contextlib.suppress(Exception):
                self._client.api.kill(self.container_id)

        await trio.to_thread.run_sync(kill)

    async def aclose(self) -> None:
        with trio.CancelScope(shield=True):
            if self._closed:
                return
            self._closed = True
            try:
                # First stop buffering stdout: the demultiplexer then reads and discards, so
                # the daemon's attach stream never blocks (a blocked stream would hold up the
                # kill and the removal of a container that floods stdout).
                with contextlib.suppress(Exception):
                    await self.stdout.aclose()
                await self.kill()
                with trio.move_on_after(10):
                    await self.wait()
                with trio.move_on_after(1.0):
                    await self._demux_done.wait()
                with contextlib.suppress(Exception):
                    await self._sock.aclose()
            finally:
                if self.counters is not None:
                    self.counters.close()
                await trio.to_thread.run_sync(self._remove)
                with contextlib.suppress(Exception):
                    self._client.close()

    def _remove(self) -> None:
        for _ in range(3):
            try:
                self._client.api.remove_container(self.container_id, force=True, v=True)
                self._removed = True
                return
            except Exception as exc:
                if getattr(getattr(exc, "response", None), "status_code", None) == 404:
                    self._removed = True
                    return


def _counters(client: Any, container_id: str) -> CpuCounters | None:
    """The CPU accounting of the container's own cgroup, read from this host's /proc and
    cgroup tree (the container's processes are the host's processes). None where the arena
    cannot see them (a remote engine, no access to /sys/fs/cgroup): the wall clock's rule."""
    try:
        pid = int(client.api.inspect_container(container_id)["State"]["Pid"])
    except Exception:
        return None
    return counters_of(pid, container_id) if pid > 0 else None


# -- the launcher ----------------------------------------------------------------------------


class DockerLauncher(Launcher):
    """Starts each bot in a fresh, locked-down container of its image."""

    def check(self, spec: LaunchSpec) -> None:
        import docker.errors

        if not spec.image:
            raise LaunchError(f"bot {spec.name}: docker mode needs an image (`image` in bot.toml)")
        client = _client()
        try:
            client.api.inspect_image(spec.image)
        except docker.errors.ImageNotFound:
            raise LaunchError(
                f"bot {spec.name}: no docker image {spec.image!r} (build or pull it first)"
            ) from None
        except docker.errors.APIError as exc:
            raise SandboxFault(f"bot {spec.name}: docker: {exc}") from exc
        finally:
            client.close()

    async def start(self, spec: LaunchSpec, nursery: trio.Nursery) -> BotProcess:
        if not spec.image:
            raise LaunchError(f"bot {spec.name}: docker mode needs an image (`image` in bot.toml)")
        # one client (HTTP connection pool) per bot, closed with it: nothing accumulates
        # over a long tournament
        client = await trio.to_thread.run_sync(_client)
        await trio.to_thread.run_sync(sweep_stale, client)
        container_id = None
        sock: trio.SocketStream | None = None
        try:
            container_id = await trio.to_thread.run_sync(self._create, client, spec)
            raw = await trio.to_thread.run_sync(self._attach, client, container_id)
            sock = trio.SocketStream(trio.socket.from_stdlib_socket(raw))
            await trio.to_thread.run_sync(self._start, client, spec, container_id)
        except BaseException:
            with trio.CancelScope(shield=True):
                if sock is not None:
                    await sock.aclose()
                if container_id is not None:
                    cid = container_id
                    with contextlib.suppress(Exception):
                        await trio.to_thread.run_sync(
                            lambda: client.api.remove_container(cid, force=True)
                        )
                client.close()
            raise
        bot = DockerBot(spec, client, container_id, sock)
        bot.counters = await trio.to_thread.run_sync(_counters, client, container_id)
        if bot.counters is not None:
            bot.counters.cap = spec.limits.cpu_quota()  # docker refuses what it cannot cap
        nursery.start_soon(bot._demux)
        nursery.start_soon(bot._watch_exit)
        return bot

    def _create(self, client: Any, spec: LaunchSpec) -> str:
        import docker.errors
        from docker.types import Ulimit

        try:
            image = client.api.inspect_image(spec.image)
        except docker.errors.ImageNotFound as exc:
            raise LaunchError(f"bot {spec.name}: no docker image {spec.image!r}") from exc
        except docker.errors.APIError as exc:
            raise SandboxFault(f"bot {spec.name}: docker: {exc}") from exc
        user = (image.get("Config") or {}).get("User") or ""
        if user.split(":")[0] in ("", "0", "root"):
            user = DEFAULT_USER
        limits = spec.limits
        mem = limits.memory_mb * 1024 * 1024
        ulimits = [
            Ulimit(name="core", soft=0, hard=0),
            Ulimit(name="nofile", soft=limits.open_files, hard=limits.open_files),
            Ulimit(
                name="fsize",
                soft=limits.file_size_mb * 1024 * 1024,
                hard=limits.file_size_mb * 1024 * 1024,
            ),
        ]
        if limits.cpu_seconds is not None:
            ulimits.append(Ulimit(name="cpu", soft=limits.cpu_seconds, hard=limits.cpu_seconds + 1))
        host_config = client.api.create_host_config(
            network_mode="bridge" if limits.network else "none",
            mem_limit=mem,
            memswap_limit=mem,
            pids_limit=limits.processes,
            # docker refuses more CPUs than the machine has: that many is no cap either
            nano_cpus=round(min(limits.cpus, os.cpu_count() or 1) * 1e9),
            cpuset_cpus=",".join(map(str, spec.cpu_affinity)) if spec.cpu_affinity else None,
            read_only=True,
            tmpfs={"/tmp": f"rw,nosuid,nodev,size={limits.tmpfs_mb}m,mode=1777"},
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            init=True,
            ulimits=ulimits,
            auto_remove=False,
        )
        env = {"PATH": DEFAULT_PATH, "HOME": "/tmp", "LANG": "C.UTF-8", "TMPDIR": "/tmp"}
        env.update(spec.env)
        try:
            created = client.api.create_container(
                spec.image,
                command=list(spec.command) or None,
                user=user,
                environment=env,
                stdin_open=True,  # and, not detached: StdinOnce (EOF closes stdin)
                tty=False,
                network_disabled=not limits.network,
                host_config=host_config,
                labels={LABEL: spec.name, OWNER_LABEL: owner()},
            )
        except docker.errors.APIError as exc:
            raise SandboxFault(f"bot {spec.name}: docker create failed: {exc}") from exc
        return str(created["Id"])

    @staticmethod
    def _attach(client: Any, container_id: str) -> socket.socket:
        params = {"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1, "logs": 0}
        try:
            io = client.api.attach_socket(container_id, params=params)
        except Exception as exc:
            raise SandboxFault(f"docker attach failed: {exc}") from exc
        raw = getattr(io, "_sock", io)
        if not isinstance(raw, socket.socket):
            raise SandboxFault(f"docker attach gave an unexpected socket type {type(io)}")
        # our own descriptor, so closing the SDK's response objects cannot close it under us
        dup = raw.dup()
        with contextlib.suppress(Exception):
            io.close()
        dup.setblocking(False)
        return dup

    @staticmethod
    def _start(client: Any, spec: LaunchSpec, container_id: str) -> None:
        import docker.errors

        try:
            client.api.start(container_id)
        except docker.errors.APIError as exc:
            text = str(exc)
            if "executable file not found" in text or "no such file or directory" in text:
                raise LaunchError(f"bot {spec.name}: cannot start in {spec.image}: {text}") from exc
            raise SandboxFault(f"bot {spec.name}: docker start failed: {text}") from exc
