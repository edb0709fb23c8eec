"""Submissions as strangers send them, against a real `arena league serve` on loopback:
several at once, refused ones, and the operator's `bot add` of a bot with a build step.

- Concurrent uploads: every version is validated from its own directory (a version row was
  once visible to the validation loop before its files were moved into place, and it failed
  at stage `manifest` with "bot.toml: cannot read").
- Refused uploads leave nothing on disk: only the archives of accepted versions are kept.
- `bot add` never writes into the source folder and never ships the build's output.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import shutil
import tarfile
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from .support import (
    BACKENDS,
    BOTS,
    Server,
    add_user,
    cli,
    league_fixture,
    make_league,
    postgres_database,
)

pytestmark = pytest.mark.slow

#: a bot that stops at once: its validation fails quickly at the `games` stage (handshake),
#: which shows its bot.toml was read from the right directory
QUITTER = "raise SystemExit(0)\n"


def bot_archive(name: str, body: str = QUITTER) -> bytes:
    """A tar.gz of a bot; the same arguments give the same bytes (no gzip time)."""
    buf = io.BytesIO()
    with (
        gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as gz,
        tarfile.open(fileobj=gz, mode="w") as tar,
    ):
        for member, text in (
            ("bot.toml", f'name = "{name}"\ncommand = ["python3", "bot.py"]\n'),
            ("bot.py", body),
        ):
            data = text.encode()
            info = tarfile.TarInfo(member)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def archive_files(directory: Path) -> list[Path]:
    return sorted(p for p in (directory / "archives").rglob("*") if p.is_file())


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def league_dir(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if request.param == "sqlite":
        yield make_league(tmp_path / "league", games='["stripes"]')
    else:
        with postgres_database() as url:
            yield make_league(tmp_path / "league", url, games='["stripes"]')


async def test_concurrent_submissions_each_validate_their_own_files(league_dir: Path) -> None:
    rounds, at_once = 8, 8
    tokens = [add_user(league_dir, f"u{i}") for i in range(at_once)]
    with Server(league_dir) as server:
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as client:
            answers: list[httpx.Response] = []

            async def uploads(i: int) -> None:
                # back to back, so that registrations are under way whenever the validation
                # loop looks for versions to validate
                for r in range(rounds):
                    answers.append(
                        await client.post(
                            "/api/v1/bots",
                            content=bot_archive(f"b{r}-{i}"),
                            headers={
                                "Authorization": f"Bearer {tokens[i]}",
                                "Content-Type": "application/gzip",
                            },
                        )
                    )

            async with trio.open_nursery() as nursery:
                for i in range(at_once):
                    nursery.start_soon(uploads, i)
        assert [a.status_code for a in answers] == [202] * rounds * at_once, [
            a.text for a in answers if a.status_code != 202
        ]

        def reports() -> list[dict] | None:
            out = []
            for a in answers:
                v = server.get(a.json()["url"]).json()
                if v["validation"] is None:
                    return None
                out.append(v["validation"])
            return out

        done = server.wait_for(reports, timeout=240, what="every validation")
    wrong = [(r["bot_name"], r["stage"], r["problem"]) for r in done if r["stage"] != "games"]
    assert not wrong, wrong
    assert all(r["problem"].startswith("handshake") for r in done), done


#: a League on a migrated database of each backend, without a server
league = league_fixture(backends=BACKENDS)


async def test_a_version_is_never_visible_before_its_files(league: Any) -> None:
    """What the validation loop reads, read as often as possible while submissions register:
    every version waiting for validation has its directory and bot.toml in place."""
    from arena.league.db import roster, schema

    users = [league.add_user(f"u{i}")[0] for i in range(4)]
    seen: list[str] = []
    missing: list[tuple[int, str]] = []
    done = trio.Event()

    async def submit(user: Any, i: int) -> None:
        for r in range(6):
            await league.submit(user, bot_archive(f"b{i}-{r}"))

    async def watch() -> None:
        while not done.is_set():
            for v in await league.read(roster.versions_in_state, schema.VersionState.VALIDATING):
                seen.append(v.path)
                if not v.path or not (Path(v.path) / "bot.toml").is_file():
                    missing.append((v.id, v.path))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(watch)
        async with trio.open_nursery() as submitters:
            for i, user in enumerate(users):
                submitters.start_soon(submit, user, i)
        done.set()
    assert seen and not missing, missing


def test_refused_uploads_leave_no_files(league_dir: Path, tmp_path: Path) -> None:
    alice = add_user(league_dir, "alice")
    bob = add_user(league_dir, "bob")
    with Server(league_dir) as server:

        def post(token: str, data: bytes) -> httpx.Response:
            return server.client.post(
                "/api/v1/bots",
                content=data,
                headers={"Authorization": f"Bearer {token}", "Content-Type": "application/gzip"},
            )

        assert post(alice, bot_archive("mine")).status_code == 202
        kept = archive_files(league_dir)
        assert len(kept) == 1

        bad_manifest = io.BytesIO()
        with tarfile.open(fileobj=bad_manifest, mode="w:gz") as tar:
            data = b'name = "broken"\n'  # no command
            info = tarfile.TarInfo("bot.toml")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        refusals = [
            (alice, bad_manifest.getvalue(), 422),  # the manifest does not load
            (alice, bot_archive("no good name!"), 422),  # the manifest's name is not a name
            (bob, bot_archive("mine"), 403),  # alice's bot name
            (alice, b"\x1f\x8b not really gzip", 400),  # not an archive
        ]
        for token, body, status in refusals:
            answer = post(token, body)
            assert answer.status_code == status, answer.text
        assert archive_files(league_dir) == kept
        assert not [p for p in (league_dir / "bots").iterdir() if p.name.startswith(".")]

        # the same archive again: accepted, still one file
        assert post(alice, bot_archive("mine")).status_code == 202
        assert archive_files(league_dir) == kept


def _snapshot(top: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            out[str(p.relative_to(top))] = (st.st_mtime_ns, st.st_size)
    return out


def test_bot_add_builds_in_a_copy_and_ships_no_binary(tmp_path: Path) -> None:
    if shutil.which("cc") is None:
        pytest.skip("a C compiler (cc) is needed to build random-c")
    source = tmp_path / "random-c"
    shutil.copytree(BOTS / "random-c", source)
    (source / "random_bot").unlink(missing_ok=True)
    before = _snapshot(source)
    league = make_league(tmp_path / "league")
    add_user(league, "op")
    cli("league", "bot", "add", str(source), "--owner", "op", "-C", str(league))
    assert _snapshot(source) == before
    [archive] = archive_files(league)
    with tarfile.open(archive) as tar:
        names = tar.getnames()
    assert "bot.toml" in names and "random_bot.c" in names
    assert "random_bot" not in names, names
    [built] = [p for p in (league / "bots").iterdir() if not p.name.startswith(".")]
    assert os.access(built / "random_bot", os.X_OK)


# --- large and slow uploads ------------------------------------------------------------------


def server_sockets(port: int) -> int:
    """Connections of the server's port that are not closed yet (ESTABLISHED or CLOSE_WAIT),
    read from /proc/net/tcp: the server's side only (its local port), never the listener."""
    n = 0
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, state = fields[1], fields[3]
        if int(local.split(":")[1], 16) == port and state in ("01", "08"):
            n += 1
    return n


def raw_post(server: Server, token: str, length: int) -> Any:
    import socket

    host, port = server.url.split("//")[1].rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=60)
    sock.sendall(
        (
            "POST /api/v1/bots HTTP/1.1\r\nHost: league\r\n"
            f"Authorization: Bearer {token}\r\nContent-Type: application/gzip\r\n"
            f"Content-Length: {length}\r\n\r\n"
        ).encode()
    )
    return sock


def read_answer(sock: Any) -> bytes:
    """Everything the server sends until it closes the connection or the answer is whole (a
    bounded read: the socket's timeout)."""
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = [
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        ]
        if length and len(body) >= length[0]:
            return data


@pytest.fixture
def served(tmp_path: Path) -> Any:
    d = make_league(tmp_path / "league")
    token = add_user(d, "alice")
    with Server(d) as server:
        yield server, token, int(server.url.rsplit(":", 1)[1])


def test_an_upload_written_whole_before_reading_gets_its_413(served) -> None:
    """20 MiB, twice the cap, written to the last byte before the client reads (as http.client
    and Node's fetch do): the 413 is there to read, and the connection does not linger."""
    server, token, port = served
    baseline = server_sockets(port)
    size = 20 << 20
    sock = raw_post(server, token, size)
    chunk = b"\0" * (1 << 16)
    for _ in range(size // len(chunk)):
        sock.sendall(chunk)
    answer = read_answer(sock)
    assert answer.startswith(b"HTTP/1.1 413 "), answer[:200]
    assert b"larger than this league's 10 MB" in answer
    # the body was read to its end: the connection stays usable
    sock.sendall(b"GET /api/v1 HTTP/1.1\r\nHost: league\r\n\r\n")
    assert read_answer(sock).startswith(b"HTTP/1.1 200 ")
    sock.close()
    server.wait_for(lambda: server_sockets(port) <= baseline, 30, "the connection to close")


def test_an_upload_beyond_what_is_drained_is_answered_and_closed(served) -> None:
    from arena.league.web.bodies import DRAIN_LIMIT

    server, token, port = served
    sock = raw_post(server, token, DRAIN_LIMIT * 2)
    # the server may answer and stop reading before this much is sent (it drains no more
    # than DRAIN_LIMIT): a send cut short by its close is what is tested, not a failure
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        sock.sendall(b"\0" * (1 << 20))
    answer = read_answer(sock)
    assert answer.startswith(b"HTTP/1.1 413 "), answer[:200]
    assert b"connection: close" in answer.lower()
    assert sock.recv(1 << 16) == b""  # closed by the server, not left waiting for the rest
    sock.close()
    server.wait_for(lambda: server_sockets(port) == 0, 30, "the connection to close")


@pytest.mark.parametrize("length", [1 << 20, 20 << 20])
def test_a_stalled_upload_is_cut_off(served, length: int) -> None:
    """A client that stops mid-body (under the cap, or over it: the drain waits the same way)
    gets a 408 or its 413, and the server closes the connection within the bound."""
    import time

    from arena.league.web.bodies import IDLE

    server, token, port = served
    sock = raw_post(server, token, length)
    sock.sendall(b"\0" * 100_000)
    started = time.monotonic()
    answer = read_answer(sock)
    assert sock.recv(1 << 16) == b""  # and then the server closed the connection
    waited = time.monotonic() - started
    sock.close()
    expected = b"HTTP/1.1 408 " if length < 10 << 20 else b"HTTP/1.1 413 "
    assert answer.startswith(expected), answer[:300]
    assert b"connection: close" in answer.lower()
    assert waited < IDLE + 30, waited
    server.wait_for(lambda: server_sockets(port) == 0, 30, "the connection to close")
    # and the server goes on answering
    assert server.get("/api/v1").status_code == 200
