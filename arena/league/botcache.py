"""A worker's bots: fetched by content hash, verified, unpacked, built, kept.

A worker plays versions it has never seen. It knows each by the sha256 of its submitted archive
(the versions table) and gets the bytes from shared storage if it has one (a BlobStore
directory, e.g. the server's archives/ mounted read-only) or else from the server
(`GET /api/v1/worker/archives/{sha256}`, with the worker secret). Whatever the source, the bytes
are hashed here and refused unless they match: a worker never runs a bot it cannot verify, so a
compromised server path or disk cannot substitute code. The archive is then unpacked with the
submission checks (arena/league/archives.py, again: the worker trusts no earlier check), built
in the sandbox as at submission (arena/referee/build.py), and renamed into place whole, so a
directory under `bots/` is always complete; a worker killed mid-fetch leaves only a `.tmp-`
directory, removed at its next start.

Failing to get or build a bot is the platform's fault (unrated, the game is replayed), since
the version passed validation on the server. Failing to reach the server at all
(`ServerUnreachable`) is this worker's trouble, not the game's: the slot gives the job back
without claiming the game, and the worker stops taking jobs until the server answers.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import httpx
import trio

from arena.errors import ArenaError
from arena.league.archives import BlobStore, unpack_archive
from arena.league.errors import LeagueError, PlatformFault

#: marker written last into a bot directory that is unpacked and built
READY = ".arena-ready"
#: seconds a download may take
FETCH_TIMEOUT = 60.0


class ServerUnreachable(PlatformFault):
    """The archive could not be asked for at all: the server is down, unreachable, failing
    (5xx) or refuses this worker's secret, or no server is known. Not the game's fault nor a
    bot's: the worker stops taking jobs until the server answers (arena/league/worker.py)."""

    def __init__(self, message: str, server: str | None) -> None:
        super().__init__(message)
        self.server = server


class BotCache:
    def __init__(
        self,
        root: Path,
        server: str | None,
        secret: str | None,
        shared: Path | None = None,
        lookup: Callable[[], tuple[str | None, str | None]] | None = None,
        blobs: Callable[[str], bytes | None] | None = None,
    ) -> None:
        self.root = root
        self.server = server.rstrip("/") if server else None
        self.secret = secret
        #: blocking; (server URL, secret) as published in the database now, for a worker that
        #: started before the server did
        self.lookup = lookup
        self.shared = BlobStore(shared) if shared is not None else None
        #: blocking; a tournament's archive from the database (verified), None if not there
        self.blobs = blobs
        self.bots = root / "bots"
        self._locks: dict[str, trio.Lock] = {}

    def sweep(self) -> int:
        """Remove half-made directories left by a worker that died; how many."""
        self.bots.mkdir(parents=True, exist_ok=True)
        n = 0
        for entry in self.bots.iterdir():
            if entry.name.startswith(".tmp-"):
                shutil.rmtree(entry, ignore_errors=True)
                n += 1
        return n

    async def path(self, sha: str) -> Path:
        """The built bot directory for archive `sha`, fetching and building it on first use."""
        final = self.bots / sha
        if (final / READY).exists():
            return final
        lock = self._locks.setdefault(sha, trio.Lock())
        async with lock:
            if not (final / READY).exists():
                await self._make(sha, final)
        return final

    async def _make(self, sha: str, final: Path) -> None:
        from arena.referee import BuildError, load_bot
        from arena.referee.build import build_bot
        from arena.sandbox import SandboxFault

        data = await trio.to_thread.run_sync(self._fetch, sha)
        self.bots.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=self.bots))
        try:
            try:
                await trio.to_thread.run_sync(unpack_archive, data, tmp / "bot")
            except ArenaError as e:
                raise PlatformFault(f"archive {sha[:12]}: refused by the worker: {e}") from None
            try:
                await build_bot(load_bot(tmp / "bot"))
            except (BuildError, SandboxFault) as e:
                raise PlatformFault(
                    f"archive {sha[:12]}: build failed on this worker: {e}"
                ) from None
            await trio.to_thread.run_sync(_install, tmp / "bot", final, sha)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def _fetch(self, sha: str) -> bytes:
        """The archive's bytes, verified against its name. Blocking (a worker thread)."""
        if self.shared is not None:
            with contextlib.suppress(LeagueError):
                return self.shared.get(sha)  # verifies the hash; PlatformFault if corrupt
        if self.blobs is not None and (data := self.blobs(sha)) is not None:
            if hashlib.sha256(data).hexdigest() != sha:
                raise PlatformFault(f"archive {sha[:12]}: the database's bytes do not match")
            return data
        if self.server is None and self.lookup is not None:
            server, self.secret = self.lookup()
            self.server = server.rstrip("/") if server else None
        if self.server is None:
            raise ServerUnreachable(f"archive {sha[:12]}: no server to fetch it from", None)
        url = f"{self.server}/api/v1/worker/archives/{sha}"
        headers = {"Authorization": f"Bearer {self.secret}"} if self.secret else {}
        try:
            r = httpx.get(url, headers=headers, timeout=FETCH_TIMEOUT)
        except httpx.HTTPError as e:
            raise ServerUnreachable(
                f"cannot reach {self.server}: {e or type(e).__name__}", self.server
            ) from None
        if r.status_code >= 500 or r.status_code in (401, 403):
            raise ServerUnreachable(
                f"{self.server} answered {r.status_code} for an archive", self.server
            )
        if r.status_code != 200:
            raise PlatformFault(f"archive {sha[:12]}: the server answered {r.status_code}")
        if hashlib.sha256(r.content).hexdigest() != sha:
            raise PlatformFault(f"archive {sha[:12]}: the bytes received do not match the hash")
        return r.content


def _install(made: Path, final: Path, sha: str) -> None:
    """Mark `made` complete and rename it into place in one step; blocking."""
    (made / READY).write_text(sha)
    if final.exists() and not (final / READY).exists():  # an incomplete leftover
        shutil.rmtree(final, ignore_errors=True)
    with contextlib.suppress(OSError):  # another slot of this machine was first
        os.rename(made, final)
    if not (final / READY).exists():
        raise PlatformFault(f"archive {sha[:12]}: could not be put in the cache")
