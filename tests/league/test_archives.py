"""Submitted archives: every rule refused with real malicious archives built here, good archives
unpacked exactly, the content-addressed store, and the deterministic packer."""

from __future__ import annotations

import gzip
import io
import os
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.errors import ArenaError
from arena.league.archives import (
    ArchiveCaps,
    BlobStore,
    inspect_archive,
    pack_bot_dir,
    unpack_archive,
)
from arena.league.errors import LeagueError, PlatformFault

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = b'name = "t"\ncommand = ["python3", "bot.py"]\n'


def tar_bytes(members: list[tarfile.TarInfo | tuple[str, bytes]], compress: bool = True) -> bytes:
    """A tar (gzip'd unless told) of (name, content) files and raw TarInfo entries."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz" if compress else "w") as tar:
        for m in members:
            if isinstance(m, tarfile.TarInfo):
                tar.addfile(m)
            else:
                name, content = m
                info = tarfile.TarInfo(name)
                info.size = len(content)
                tar.addfile(info, io.BytesIO(content))
    return buf.getvalue()


def entry(name: str, kind: bytes, linkname: str = "", mode: int = 0o644) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    info.mode = mode
    return info


def zip_bytes(members: list[tuple[str, bytes] | zipfile.ZipInfo], blobs: dict | None = None):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for m in members:
            if isinstance(m, zipfile.ZipInfo):
                zf.writestr(m, (blobs or {}).get(m.filename, b""))
            else:
                zf.writestr(*m)
    return buf.getvalue()


def refused(data: bytes, caps: ArchiveCaps | None = None) -> LeagueError:
    with pytest.raises(LeagueError) as info:
        inspect_archive(data, caps)
    assert info.value.field == "archive"
    return info.value


GOOD = [("bot.toml", MANIFEST), ("bot.py", b"print('hi')\n")]


# -- accepted archives ------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["tar.gz", "tar", "zip"])
def test_good_archive_in_every_format_unpacks_exactly(tmp_path: Path, fmt: str) -> None:
    members = [*GOOD, ("lib/util.py", b"x = 1\n")]
    data = zip_bytes(members) if fmt == "zip" else tar_bytes(members, compress=fmt == "tar.gz")
    info = inspect_archive(data)
    assert info.format == fmt and info.root == ""
    assert {m.path for m in info.members} == {"bot.toml", "bot.py", "lib/util.py"}
    unpack_archive(data, tmp_path / "out")
    assert (tmp_path / "out" / "lib" / "util.py").read_bytes() == b"x = 1\n"
    assert (tmp_path / "out" / "bot.toml").read_bytes() == MANIFEST


@pytest.mark.parametrize("fmt", ["tar.gz", "zip"])
def test_single_top_level_directory_is_stripped(tmp_path: Path, fmt: str) -> None:
    members = [("mybot/bot.toml", MANIFEST), ("mybot/bot.py", b"pass\n")]
    data = zip_bytes(members) if fmt == "zip" else tar_bytes(members)
    info = inspect_archive(data)
    assert info.root == "mybot"
    unpack_archive(data, tmp_path / "o")
    assert sorted(os.listdir(tmp_path / "o")) == ["bot.py", "bot.toml"]


def test_links_inside_the_archive_are_kept(tmp_path: Path) -> None:
    data = tar_bytes(
        [
            *GOOD,
            ("data/book.bin", b"\x01\x02"),
            entry("data/latest", tarfile.SYMTYPE, "book.bin"),
            entry("copy.bin", tarfile.LNKTYPE, "data/book.bin"),
            entry("sub/up", tarfile.SYMTYPE, "../data"),
        ]
    )
    unpack_archive(data, tmp_path / "o")
    out = tmp_path / "o"
    assert os.readlink(out / "data" / "latest") == "book.bin"
    assert (out / "data" / "latest").read_bytes() == b"\x01\x02"
    assert (out / "copy.bin").read_bytes() == b"\x01\x02"
    assert not (out / "copy.bin").is_symlink()
    assert (out / "copy.bin").stat().st_ino != (out / "data" / "book.bin").stat().st_ino
    assert (out / "sub" / "up" / "book.bin").read_bytes() == b"\x01\x02"


def test_setuid_and_other_mode_bits_are_stripped(tmp_path: Path) -> None:
    suid = tarfile.TarInfo("run")
    suid.mode = 0o6777
    content = b"#!/bin/sh\n"
    suid.size = len(content)
    wide = tarfile.TarInfo("plain")
    wide.mode = 0o4666
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.addfile(tarfile.TarInfo("bot.toml"), io.BytesIO(b""))
        tar.addfile(suid, io.BytesIO(content))
        tar.addfile(wide, io.BytesIO(b""))
        tar.addfile(entry("d", tarfile.DIRTYPE, mode=0o1777))
    unpack_archive(buf.getvalue(), tmp_path / "o")
    out = tmp_path / "o"
    assert stat.S_IMODE((out / "run").stat().st_mode) == 0o755
    assert stat.S_IMODE((out / "plain").stat().st_mode) == 0o644
    assert stat.S_IMODE((out / "d").stat().st_mode) == 0o755


def test_modes_do_not_depend_on_the_umask(tmp_path: Path) -> None:
    """Under a strict umask the bot's own uid must still read its whole directory."""
    data = tar_bytes([*GOOD, ("a/b/c.py", b""), entry("d", tarfile.DIRTYPE)])
    old = os.umask(0o077)
    try:
        unpack_archive(data, tmp_path / "o")
    finally:
        os.umask(old)
    out = tmp_path / "o"
    for p in (out, out / "a", out / "a" / "b", out / "d"):
        assert stat.S_IMODE(p.stat().st_mode) == 0o755, p
    assert stat.S_IMODE((out / "a" / "b" / "c.py").stat().st_mode) == 0o644


def test_zip_setuid_bit_is_stripped(tmp_path: Path) -> None:
    info = zipfile.ZipInfo("tool")
    info.create_system = 3
    info.external_attr = (stat.S_IFREG | 0o4755) << 16
    data = zip_bytes([*GOOD, info], {"tool": b"x"})
    unpack_archive(data, tmp_path / "o")
    assert stat.S_IMODE((tmp_path / "o" / "tool").stat().st_mode) == 0o755


# -- refused archives: one test per rule ------------------------------------------------------


def test_absolute_path() -> None:
    err = refused(tar_bytes([*GOOD, ("/etc/cron.d/evil", b"x")]))
    assert err.status == 422
    assert str(err) == "archive member '/etc/cron.d/evil': absolute paths are not allowed"


@pytest.mark.parametrize("name", ["../evil", "a/../../evil", "a/.."])
def test_dotdot_escape(name: str) -> None:
    err = refused(tar_bytes([*GOOD, (name, b"x")]))
    assert str(err) == f"archive member {name!r}: '..' in a path is not allowed"


def test_dotdot_in_zip() -> None:
    err = refused(zip_bytes([*GOOD, ("../../evil.py", b"x")]))
    assert "'..' in a path is not allowed" in str(err)


@pytest.mark.parametrize(
    ("links", "culprit"),
    [
        ([("out", "/etc/passwd")], "out"),
        ([("out", "../../etc")], "out"),
        ([("a/b/out", "../../..")], "a/b/out"),
        # each link alone stays inside; followed together they leave: `self` is the top
        # directory, so self/.. is its parent
        ([("self", "."), ("out", "self/..")], "out"),
        ([("loop1", "loop2"), ("loop2", "loop1")], "loop1"),
    ],
)
def test_symlink_leading_outside(links: list[tuple[str, str]], culprit: str) -> None:
    data = tar_bytes([*GOOD, *(entry(n, tarfile.SYMTYPE, t) for n, t in links)])
    err = refused(data)
    assert err.status == 422
    assert str(err).startswith(f"archive member {culprit!r}: symbolic link to ")
    assert "leads outside the archive" in str(err)


def test_member_written_through_a_symlink_is_refused() -> None:
    data = tar_bytes([*GOOD, entry("d", tarfile.SYMTYPE, "/tmp"), ("d/evil", b"x")])
    assert str(refused(data)) == "archive member 'd/evil': inside 'd', which is not a directory"


def test_zip_symlink_leading_outside() -> None:
    link = zipfile.ZipInfo("escape")
    link.create_system = 3
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    err = refused(zip_bytes([*GOOD, link], {"escape": b"../../../etc/shadow"}))
    assert "symbolic link to '../../../etc/shadow' leads outside" in str(err)


@pytest.mark.parametrize("target", ["/etc/passwd", "../outside", "missing.txt", "lib"])
def test_hardlink_outside(target: str) -> None:
    data = tar_bytes([*GOOD, entry("lib", tarfile.DIRTYPE), entry("h", tarfile.LNKTYPE, target)])
    err = refused(data)
    assert err.status == 422
    assert (
        str(err)
        == f"archive member 'h': hard link to {target!r}, which is not a file of the archive"
    )


@pytest.mark.parametrize("kind", [tarfile.CHRTYPE, tarfile.BLKTYPE, tarfile.FIFOTYPE])
def test_devices_and_fifos(kind: bytes) -> None:
    err = refused(tar_bytes([*GOOD, entry("dev/thing", kind)]))
    assert str(err) == "archive member 'dev/thing': devices, fifos and sockets are not allowed"


def test_zip_device() -> None:
    dev = zipfile.ZipInfo("null")
    dev.create_system = 3
    dev.external_attr = (stat.S_IFCHR | 0o666) << 16
    assert "devices, fifos and sockets" in str(refused(zip_bytes([*GOOD, dev])))


@pytest.mark.parametrize("fmt", ["tar.gz", "zip"])
def test_too_many_members(fmt: str) -> None:
    members = [*GOOD, *((f"f{i}", b"") for i in range(20))]
    data = zip_bytes(members) if fmt == "zip" else tar_bytes(members)
    err = refused(data, ArchiveCaps(max_members=10))
    assert err.status == 413
    assert str(err) == "archive has more than 10 members (the limit)"


def test_upload_too_big() -> None:
    data = tar_bytes([*GOOD, ("blob", os.urandom(5000))])
    err = refused(data, ArchiveCaps(max_bytes=4000))
    assert err.status == 413
    assert str(err) == f"archive is {len(data)} bytes; the limit is 4000"


@pytest.mark.parametrize("fmt", ["tar.gz", "tar", "zip"])
def test_unpacked_size_cap(fmt: str) -> None:
    members = [*GOOD, ("a", os.urandom(3000)), ("b", os.urandom(3000))]
    data = zip_bytes(members) if fmt == "zip" else tar_bytes(members, compress=fmt != "tar")
    err = refused(data, ArchiveCaps(max_unpacked_bytes=5000))
    assert err.status == 413
    assert str(err) == "archive unpacks to more than 5000 bytes (the limit)"


def test_gzip_bomb_stops_at_the_cap() -> None:
    """One GiB of zeros in a 1 MiB upload: refused after decompressing only up to the cap."""
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb") as gz:
        chunk = bytes(1 << 20)
        for _ in range(1024):
            gz.write(chunk)
    err = refused(buf.getvalue(), ArchiveCaps(max_unpacked_bytes=8 << 20))
    assert err.status == 413
    assert "unpacks to more than" in str(err)


def test_gzip_ratio_bomb_under_the_size_cap() -> None:
    data = tar_bytes([*GOOD, ("zeros", bytes(4 << 20))])
    err = refused(data, ArchiveCaps(max_ratio=100))
    assert err.status == 413
    assert str(err) == "archive compresses better than 100:1 (a gzip bomb?)"


def test_zip_bomb_ratio() -> None:
    data = zip_bytes([*GOOD, ("zeros.bin", bytes(8 << 20))])
    err = refused(data, ArchiveCaps(max_ratio=100))
    assert err.status == 413
    assert str(err).startswith("archive member 'zeros.bin': compression ratio ")
    assert str(err).endswith(":1 exceeds 100:1 (a zip bomb?)")


def test_duplicate_names() -> None:
    err = refused(tar_bytes([*GOOD, ("bot.py", b"second")]))
    assert str(err) == "archive member 'bot.py': duplicate name"
    err = refused(tar_bytes([*GOOD, ("./bot.py", b"second")]))
    assert str(err) == "archive member './bot.py': duplicate name"
    err = refused(zip_bytes([*GOOD, ("lib/x", b""), ("lib", b"file")]))
    assert str(err) == "archive member 'lib': duplicate name"


def test_bot_toml_missing_or_too_deep() -> None:
    for members in (
        [("bot.py", b"")],
        [("a/b/bot.toml", MANIFEST)],
        [("a/bot.toml", MANIFEST), ("b/x", b"")],
    ):
        err = refused(tar_bytes(members))
        assert str(err) == (
            "no bot.toml at the top of the archive (nor in its single top-level directory)"
        )
    err = refused(tar_bytes([entry("bot.toml", tarfile.SYMTYPE, "real.toml"), ("real.toml", b"")]))
    assert "no bot.toml" in str(err)


def test_not_an_archive_and_corrupt() -> None:
    err = refused(b"hello, this is not an archive at all")
    assert (err.status, str(err)) == (400, "not a tar.gz, tar or zip archive")
    good = tar_bytes(GOOD)
    err = refused(good[: len(good) // 2])
    assert err.status == 400 and str(err).startswith("corrupt archive")
    err = refused(b"PK\x03\x04" + b"\0" * 100)
    assert err.status == 400 and str(err).startswith("corrupt archive")


def test_control_characters_and_backslashes() -> None:
    assert "control characters" in str(refused(tar_bytes([*GOOD, ("a\nb", b"")])))
    assert "backslashes" in str(refused(zip_bytes([*GOOD, ("..\\evil", b"")])))


def test_names_must_be_utf8() -> None:
    raw = tarfile.TarInfo("x")
    raw.name = b"caf\xe9.py".decode("utf-8", "surrogateescape")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", format=tarfile.GNU_FORMAT) as tar:
        tar.addfile(tarfile.TarInfo("bot.toml"))
        tar.addfile(raw)
    err = refused(buf.getvalue())
    assert str(err) == "archive member 'caf\\udce9.py': names must be UTF-8"
    str(err).encode("utf-8")  # the message itself can be sent as JSON


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(st.sampled_from(["a", "b", "..", ".", "", "/", "bot.toml"]), max_size=4),
            st.sampled_from(["file", "dir", "sym", "hard"]),
            st.lists(st.sampled_from(["a", "b", "..", ".", "bot.toml", "/"]), max_size=4),
        ),
        max_size=8,
    )
)
def test_whatever_passes_unpacks_inside_dest(tmp_path_factory, spec) -> None:
    """Random trees of names, dots and links: an archive is refused, or every path it
    creates, links followed, stays inside the destination."""
    members: list = [("bot.toml", MANIFEST)]
    kinds = {"file": None, "dir": tarfile.DIRTYPE, "sym": tarfile.SYMTYPE, "hard": tarfile.LNKTYPE}
    for parts, kind, target in spec:
        name = "/".join(parts) or "x"
        if kinds[kind] is None:
            members.append((name, b"data"))
        else:
            members.append(entry(name, kinds[kind], "/".join(target)))
    data = tar_bytes(members)
    try:
        inspect_archive(data)
    except LeagueError:
        return
    dest = tmp_path_factory.mktemp("u") / "o"
    unpack_archive(data, dest)
    real = dest.resolve()
    for dirpath, dirnames, filenames in os.walk(dest):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            resolved = p.resolve()
            assert resolved == real or resolved.is_relative_to(real), p


# -- the store --------------------------------------------------------------------------------


def test_blob_store_put_get_unpack(tmp_path: Path) -> None:
    store = BlobStore(tmp_path / "blobs")
    data = tar_bytes(GOOD)
    sha = store.put(data)
    assert store.put(data) == sha
    assert store.path(sha).name == sha and len(sha) == 64
    assert store.get(sha) == data
    assert [p.name for p in store.path(sha).parent.iterdir()] == [sha]  # no temp file left
    info = store.unpack(sha, tmp_path / "bot")
    assert (tmp_path / "bot" / "bot.toml").read_bytes() == MANIFEST
    assert {m.path for m in info.members} == {"bot.toml", "bot.py"}


def test_blob_store_refuses_corrupt_and_unknown(tmp_path: Path) -> None:
    store = BlobStore(tmp_path)
    sha = store.put(b"some bytes")
    store.path(sha).write_bytes(b"other bytes")
    with pytest.raises(PlatformFault, match="corrupt"):
        store.get(sha)
    with pytest.raises(LeagueError) as err:
        store.get("0" * 64)
    assert err.value.status == 404
    with pytest.raises(LeagueError):
        store.get("../../etc/passwd")


def test_blob_store_unpack_checks_again(tmp_path: Path) -> None:
    store = BlobStore(tmp_path / "b")
    sha = store.put(tar_bytes([*GOOD, ("/abs", b"")]))
    with pytest.raises(LeagueError, match="absolute"):
        store.unpack(sha, tmp_path / "o")
    assert not (tmp_path / "abs").exists()


def test_unpack_refuses_a_non_empty_destination(tmp_path: Path) -> None:
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "x").write_text("")
    with pytest.raises(ArenaError, match="not empty"):
        unpack_archive(tar_bytes(GOOD), tmp_path / "o")


# -- packing ----------------------------------------------------------------------------------


def test_pack_bot_dir_is_deterministic_and_round_trips(tmp_path: Path) -> None:
    bot = tmp_path / "bot"
    (bot / "__pycache__").mkdir(parents=True)
    (bot / "__pycache__" / "x.pyc").write_bytes(b"junk")
    (bot / ".git").mkdir()
    (bot / ".git" / "HEAD").write_text("ref")
    (bot / "bot.toml").write_bytes(MANIFEST)
    (bot / "bot.py").write_text("pass\n")
    (bot / "run.sh").write_text("#!/bin/sh\n")
    (bot / "run.sh").chmod(0o750)
    (bot / "alias.py").symlink_to("bot.py")
    first = pack_bot_dir(bot)
    os.utime(bot / "bot.py", (1, 1))
    assert pack_bot_dir(bot) == first
    info = inspect_archive(first)
    assert sorted(m.path for m in info.members) == ["alias.py", "bot.py", "bot.toml", "run.sh"]
    unpack_archive(first, tmp_path / "o")
    assert stat.S_IMODE((tmp_path / "o" / "run.sh").stat().st_mode) == 0o755
    assert os.readlink(tmp_path / "o" / "alias.py") == "bot.py"
    with tarfile.open(fileobj=io.BytesIO(first)) as tar:
        assert {(m.uid, m.gid, m.mtime, m.uname) for m in tar.getmembers()} == {(0, 0, 0, "")}


def test_pack_bundled_bot_passes_inspection() -> None:
    info = inspect_archive(pack_bot_dir(ROOT / "bots" / "random-py"))
    assert "bot.toml" in {m.path for m in info.members}


def test_pack_refuses_links_outside_and_missing_manifest(tmp_path: Path) -> None:
    bot = tmp_path / "bot"
    bot.mkdir()
    with pytest.raises(ArenaError, match=r"no bot\.toml"):
        pack_bot_dir(bot)
    (bot / "bot.toml").write_bytes(MANIFEST)
    (bot / "secrets").symlink_to("/etc/passwd")
    with pytest.raises(ArenaError, match="leads outside the bot directory"):
        pack_bot_dir(bot)
    (bot / "secrets").unlink()
    (bot / "up").symlink_to("../..")
    with pytest.raises(ArenaError, match="leads outside the bot directory"):
        pack_bot_dir(bot)
    (bot / "up").unlink()
    os.mkfifo(bot / "pipe")
    with pytest.raises(ArenaError, match="not a regular file"):
        pack_bot_dir(bot)
