"""Submitted bot archives: checked in memory before anything touches the disk.

A submission is a tar.gz, a plain tar or a zip uploaded by a stranger, so every rule is checked
on the archive's own listing before a single file is written, and unpacking writes only what
the check passed (`unpack_archive` checks again itself; it never trusts a caller's earlier
check). The rules, each with its own message naming the member and a status for the API:

- size: the upload, the member count and the total unpacked size are capped (413); the stream is
  decompressed against the cap, so a gzip or zip bomb stops at the cap, not at the end of memory;
  a member that compresses better than `max_ratio`:1 is refused as a bomb (413);
- paths: no absolute path, no `..`, no backslash or control character, no duplicate name, no
  member inside a file or a symbolic link (422);
- links: a symbolic link must resolve, following the archive's other links as the kernel would,
  inside the archive; a hard link must name a regular file of the archive (422);
- types: regular files, directories and links only: no devices, fifos or sockets (422);
- modes: never taken from the archive: files become 0644, or 0755 if any execute bit was set;
  directories 0755 (no setuid, setgid, sticky or world-writable bit survives);
- a `bot.toml` at the top, or in a single top-level directory (which unpacking then strips).

Hard links are unpacked as copies, and symbolic links last, after every file and directory, so
no write ever goes through a link. `BlobStore` keeps the accepted archives content-addressed.

Everything here is blocking file and CPU work: the server calls it through
`trio.to_thread.run_sync`.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import os
import re
import stat
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from arena.errors import ArenaError
from arena.league.errors import LeagueError, PlatformFault

MANIFEST_NAME = "bot.toml"
#: directories `pack_bot_dir` leaves out: caches and version control, never part of a bot
PACK_SKIP = ("__pycache__", ".git", ".arena-build.lock")
_MAX_LINK_HOPS = 40  # as the kernel's ELOOP limit
_MAX_PATH_BYTES = 1024
_MAX_COMPONENT_BYTES = 255
_HEADER_ALLOWANCE = 4096  # tar stream bytes per member beyond its content (headers, padding)
_BOMB_FLOOR = 1 << 20  # ratios are only judged above this many unpacked bytes
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class ArchiveCaps:
    """How large a submission may be; the league's settings choose the values."""

    max_bytes: int = 16 << 20  # the upload itself
    max_members: int = 2000
    max_unpacked_bytes: int = 64 << 20  # sum of the members' sizes
    max_ratio: float = 200.0  # unpacked:compressed, judged above 1 MiB unpacked


@dataclass(frozen=True)
class Member:
    """One entry of an accepted archive, its path relative to the bot's directory."""

    path: str
    kind: str  # "file", "dir", "symlink" or "hardlink" (unpacked as a copy of `target`)
    size: int = 0
    mode: int = 0o644  # sanitised: 0644/0755 for files, 0755 for directories
    target: str = ""  # link target (symlink: as written; hardlink: a member path)


@dataclass(frozen=True)
class ArchiveInfo:
    """What `inspect_archive` accepted."""

    format: str  # "tar.gz", "tar" or "zip"
    #: the single top-level directory holding bot.toml, stripped when unpacking ("" if none)
    root: str
    members: tuple[Member, ...]
    unpacked_bytes: int


def _refuse(message: str, status: int = 422) -> LeagueError:
    return LeagueError(message, status=status, field="archive")


def _member_error(name: str, rule: str, status: int = 422) -> LeagueError:
    return _refuse(f"archive member {name!r}: {rule}", status)


# -- reading the listing ---------------------------------------------------------------------


@dataclass
class _Raw:
    name: str
    kind: str
    size: int
    executable: bool
    target: str
    content: Callable[[], bytes]
    compressed: int | None = None  # zip only: the member's compressed size


def _detect(data: bytes) -> str:
    if data[:2] == b"\x1f\x8b":
        return "tar.gz"
    if data[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return "zip"
    if data[257:262] == b"ustar":
        return "tar"
    raise _refuse("not a tar.gz, tar or zip archive", 400)


def _gunzip(data: bytes, caps: ArchiveCaps) -> bytes:
    """The whole gzip stream, decompressed against a cap: a bomb stops at the cap."""
    limit = caps.max_unpacked_bytes + _HEADER_ALLOWANCE * (caps.max_members + 2)
    out = bytearray()
    d = zlib.decompressobj(zlib.MAX_WBITS | 16)
    rest = data
    try:
        while rest:
            out += d.decompress(rest, limit + 1 - len(out))
            if len(out) > limit:
                raise _refuse(
                    f"archive unpacks to more than {caps.max_unpacked_bytes} bytes (the limit)",
                    413,
                )
            if d.eof:
                rest = d.unused_data
                if rest.strip(b"\0"):  # a concatenated gzip member: decompress it too
                    d = zlib.decompressobj(zlib.MAX_WBITS | 16)
                    continue
                break
            rest = d.unconsumed_tail
            if not rest and not d.eof:
                raise _refuse("corrupt archive: truncated gzip stream", 400)
    except zlib.error as exc:
        raise _refuse(f"corrupt archive: {exc}", 400) from None
    return bytes(out)


def _tar_entries(raw: bytes, caps: ArchiveCaps) -> list[_Raw]:
    entries: list[_Raw] = []
    try:
        with tarfile.open(fileobj=io.BytesIO(raw), mode="r:") as tar:
            while True:
                info = tar.next()
                if info is None:
                    break
                if len(entries) >= caps.max_members:
                    raise _refuse(
                        f"archive has more than {caps.max_members} members (the limit)", 413
                    )
                entries.append(_tar_entry(raw, info))
    except tarfile.TarError as exc:
        raise _refuse(f"corrupt archive: {exc}", 400) from None
    return entries


def _tar_entry(raw: bytes, info: tarfile.TarInfo) -> _Raw:
    name = info.name
    start, size = info.offset_data, info.size
    if info.isdir():
        kind = "dir"
    elif info.issym():
        kind = "symlink"
    elif info.islnk():
        kind = "hardlink"
    elif info.isreg():
        if info.sparse is not None:
            raise _member_error(name, "sparse files are not allowed")
        kind = "file"
    elif info.ischr() or info.isblk() or info.isfifo():
        raise _member_error(name, "devices, fifos and sockets are not allowed")
    else:
        raise _member_error(name, f"unsupported member type {info.type!r}")
    return _Raw(
        name=name,
        kind=kind,
        size=size if kind == "file" else 0,
        executable=bool(info.mode & 0o111),
        target=info.linkname,
        content=lambda: raw[start : start + size],
    )


def _zip_entries(data: bytes, caps: ArchiveCaps) -> list[_Raw]:
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        infos = zf.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError) as exc:
        raise _refuse(f"corrupt archive: {exc}", 400) from None
    if len(infos) > caps.max_members:
        raise _refuse(f"archive has more than {caps.max_members} members (the limit)", 413)
    entries = []
    for info in infos:
        name = info.filename
        mode = info.external_attr >> 16 if info.create_system == 3 else 0
        fmt = stat.S_IFMT(mode)
        if info.flag_bits & 0x1:
            raise _member_error(name, "encrypted members are not allowed")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise _member_error(name, "only stored or deflated members are allowed")
        if fmt in (stat.S_IFCHR, stat.S_IFBLK, stat.S_IFIFO, stat.S_IFSOCK):
            raise _member_error(name, "devices, fifos and sockets are not allowed")
        if fmt == stat.S_IFLNK:
            if info.file_size > 4096:
                raise _member_error(name, "symbolic link target longer than 4096 bytes")
            try:
                target = zf.read(info).decode()
            except (zipfile.BadZipFile, UnicodeDecodeError, zlib.error) as exc:
                raise _member_error(name, f"unreadable link target: {exc}", 400) from None
            entries.append(_Raw(name, "symlink", 0, False, target, lambda: b""))
            continue
        is_dir = info.is_dir() or fmt == stat.S_IFDIR
        kind = "dir" if is_dir else "file"
        size = 0 if is_dir else info.file_size

        def read(info: zipfile.ZipInfo = info) -> bytes:
            try:
                return zf.read(info)
            except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
                raise _member_error(info.filename, f"corrupt data: {exc}", 400) from None

        entries.append(_Raw(name, kind, size, bool(mode & 0o111), "", read, info.compress_size))
    return entries


# -- the rules -------------------------------------------------------------------------------


def _clean_path(name: str) -> str:
    """The member's path, normalised (`./a//b/` -> `a/b`); refused if it could leave the
    bot's directory or be shown misleadingly."""
    if not name:
        raise _member_error(name, "empty name")
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # undecodable bytes in a tar name (kept as surrogates)
        raise _member_error(name, "names must be UTF-8") from None
    if _CONTROL.search(name):
        raise _member_error(name, "control characters in a name are not allowed")
    if "\\" in name:
        raise _member_error(name, "backslashes in a name are not allowed")
    if name.startswith("/"):
        raise _member_error(name, "absolute paths are not allowed")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise _member_error(name, "'..' in a path is not allowed")
    path = "/".join(parts)
    if len(path.encode()) > _MAX_PATH_BYTES or any(
        len(p.encode()) > _MAX_COMPONENT_BYTES for p in parts
    ):
        raise _member_error(name, "name too long")
    return path


def _escapes(link: str, target: str, links: dict[str, str]) -> bool:
    """Would the kernel, following `target` from `link`'s directory (and any other link of the
    archive on the way), leave the archive's top directory? Loops count as escaping."""
    if target.startswith("/") or not target:
        return True
    where = link.split("/")[:-1]
    todo = target.split("/")
    hops = 0
    while todo:
        part = todo.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            if not where:
                return True
            where.pop()
            continue
        where.append(part)
        followed = links.get("/".join(where))
        if followed is not None:
            hops += 1
            if hops > _MAX_LINK_HOPS or followed.startswith("/"):
                return True
            where.pop()
            todo = followed.split("/") + todo
    return False


def _check(
    fmt: str, raw: list[_Raw], compressed: int, caps: ArchiveCaps
) -> tuple[ArchiveInfo, dict[str, _Raw]]:
    kinds: dict[str, str] = {}
    by_path: dict[str, _Raw] = {}
    members: list[Member] = []
    total = 0
    for entry in raw:
        path = _clean_path(entry.name)
        if not path:
            if entry.kind == "dir":
                continue  # "./": the top directory itself
            raise _member_error(entry.name, "empty name")
        seen = kinds.get(path)
        if seen is not None and not (seen == "dir" == entry.kind):
            raise _member_error(entry.name, "duplicate name")
        parts = path.split("/")
        for i in range(1, len(parts)):
            parent = "/".join(parts[:i])
            if kinds.setdefault(parent, "dir") != "dir":
                raise _member_error(entry.name, f"inside {parent!r}, which is not a directory")
        kinds[path] = entry.kind
        total += entry.size
        if total > caps.max_unpacked_bytes:
            raise _refuse(
                f"archive unpacks to more than {caps.max_unpacked_bytes} bytes (the limit)", 413
            )
        if (
            entry.compressed is not None
            and entry.size > _BOMB_FLOOR
            and entry.size > caps.max_ratio * max(entry.compressed, 1)
        ):
            ratio = entry.size / max(entry.compressed, 1)
            raise _member_error(
                entry.name,
                f"compression ratio {ratio:.0f}:1 exceeds {caps.max_ratio:g}:1 (a zip bomb?)",
                413,
            )
        target = entry.target
        if entry.kind == "hardlink":
            parts = [p for p in target.split("/") if p not in ("", ".")]
            inside = target and not target.startswith("/") and ".." not in parts
            target = "/".join(parts) if inside else ""
            if kinds.get(target) != "file":
                raise _member_error(
                    entry.name, f"hard link to {entry.target!r}, which is not a file of the archive"
                )
            entry.size = by_path[target].size
            total += entry.size
        if entry.kind == "file":
            mode = 0o755 if entry.executable else 0o644
        else:
            mode = 0o755 if entry.kind == "dir" else 0o777
        by_path[path] = entry
        members.append(Member(path, entry.kind, entry.size, mode, target))
    if total > caps.max_unpacked_bytes:
        raise _refuse(
            f"archive unpacks to more than {caps.max_unpacked_bytes} bytes (the limit)", 413
        )
    if fmt == "tar.gz" and total > _BOMB_FLOOR and total > caps.max_ratio * compressed:
        raise _refuse(f"archive compresses better than {caps.max_ratio:g}:1 (a gzip bomb?)", 413)
    links = {m.path: m.target for m in members if m.kind == "symlink"}
    for m in members:
        if m.kind == "symlink" and _escapes(m.path, m.target, links):
            raise _member_error(
                m.path, f"symbolic link to {m.target!r} leads outside the archive (or loops)"
            )
    root = _manifest_root(kinds)
    if root:
        prefix = root + "/"
        members = [
            Member(m.path[len(prefix) :], m.kind, m.size, m.mode, _strip(m, prefix))
            for m in members
            if m.path != root
        ]
        by_path = {p[len(prefix) :]: e for p, e in by_path.items() if p != root}
    info = ArchiveInfo(fmt, root, tuple(members), total)
    return info, by_path


def _strip(m: Member, prefix: str) -> str:
    return m.target[len(prefix) :] if m.kind == "hardlink" else m.target


def _manifest_root(kinds: dict[str, str]) -> str:
    if kinds.get(MANIFEST_NAME) == "file":
        return ""
    tops = {p.split("/", 1)[0] for p in kinds}
    if len(tops) == 1:
        (top,) = tops
        if kinds.get(top) in ("dir", None) and kinds.get(f"{top}/{MANIFEST_NAME}") == "file":
            return top
    raise _refuse(
        f"no {MANIFEST_NAME} at the top of the archive (nor in its single top-level directory)"
    )


def _inspect(data: bytes, caps: ArchiveCaps) -> tuple[ArchiveInfo, dict[str, _Raw]]:
    if len(data) > caps.max_bytes:
        raise _refuse(f"archive is {len(data)} bytes; the limit is {caps.max_bytes}", 413)
    fmt = _detect(data)
    if fmt == "zip":
        listing = _zip_entries(data, caps)
    else:
        listing = _tar_entries(_gunzip(data, caps) if fmt == "tar.gz" else data, caps)
    return _check(fmt, listing, max(len(data), 1), caps)


def inspect_archive(data: bytes, caps: ArchiveCaps | None = None) -> ArchiveInfo:
    """Check a submitted archive without unpacking it. Raises LeagueError (field "archive",
    status 400 not an archive or corrupt, 413 over a cap, 422 a rule broken) naming the member
    and the rule."""
    return _inspect(data, caps or ArchiveCaps())[0]


def unpack_archive(data: bytes, dest: Path, caps: ArchiveCaps | None = None) -> ArchiveInfo:
    """Check `data` and write what passed into `dest` (created; must not exist or be empty),
    the top-level directory stripped when bot.toml was found in one. Files and directories
    first, then hard links as copies, then symbolic links: nothing is written through a link."""
    info, entries = _inspect(data, caps or ArchiveCaps())
    dest.mkdir(parents=True, exist_ok=True)
    if any(dest.iterdir()):
        raise ArenaError(f"{dest}: not empty, will not unpack into it")
    # every directory 0755 whatever the umask: the bot's own uid must read all of it, or the
    # sandbox would have to run it as the server's uid
    os.chmod(dest, 0o755)
    base = os.fspath(dest)
    for m in info.members:
        target = os.path.join(base, m.path)
        if m.kind == "dir":
            _makedirs(base, m.path)
    for m in info.members:
        if m.kind not in ("file", "hardlink"):
            continue
        source = entries[m.target] if m.kind == "hardlink" else entries[m.path]
        target = os.path.join(base, m.path)
        _makedirs(base, os.path.dirname(m.path))
        content = source.content()
        if len(content) != source.size:
            raise _member_error(m.path, "content does not match its declared size", 400)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        mode = 0o755 if source.executable else 0o644
        fd = os.open(target, flags, mode)
        try:
            with os.fdopen(fd, "wb", closefd=False) as f:
                f.write(content)
            os.fchmod(fd, mode)  # not subject to the umask
        finally:
            os.close(fd)
    for m in info.members:
        if m.kind == "symlink":
            target = os.path.join(base, m.path)
            _makedirs(base, os.path.dirname(m.path))
            os.symlink(m.target, target)
    return info


def _makedirs(base: str, rel: str) -> None:
    """Create `rel` under `base`, each new directory 0755 whatever the umask (checked paths:
    no component is a link, `_check` refused members inside links)."""
    path = base
    for part in rel.split("/") if rel else ():
        path = os.path.join(path, part)
        if not os.path.isdir(path):
            os.mkdir(path)
            os.chmod(path, 0o755)


# -- packing (the client side) ---------------------------------------------------------------


def pack_bot_dir(path: str | os.PathLike[str], skip: Sequence[str] = ()) -> bytes:
    """The bot's directory as a deterministic tar.gz (sorted names, no owners, times or
    gzip name; modes 0644/0755): the same directory always gives the same bytes, so the
    server's content hash names a version. Caches and `.git` are left out, and the files named
    in `skip` (paths relative to the directory: `bot add` leaves out the build's output).
    Refuses (ArenaError) a directory without bot.toml, a symbolic link leading outside it, and
    special files."""
    top = Path(path)
    if not top.is_dir():
        raise ArenaError(f"{top}: not a directory")
    if not (top / MANIFEST_NAME).is_file():
        raise ArenaError(f"{top}: no {MANIFEST_NAME} in the bot directory")
    real_top = top.resolve()
    buf = io.BytesIO()
    with (
        gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as gz,
        tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        left_out = {os.path.normpath(p) for p in skip}
        for rel in _walk(top):
            if rel not in left_out:
                _add(tar, top, rel, real_top)
    return buf.getvalue()


def _walk(top: Path) -> list[str]:
    out = []
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(d for d in dirnames if d not in PACK_SKIP)
        rel_dir = os.path.relpath(dirpath, top)
        for name in sorted(dirnames + [f for f in filenames if f not in PACK_SKIP]):
            out.append(name if rel_dir == "." else f"{rel_dir}/{name}")
    return sorted(out)


def _add(tar: tarfile.TarFile, top: Path, rel: str, real_top: Path) -> None:
    full = top / rel
    st = full.lstat()
    info = tarfile.TarInfo(rel)
    info.mtime = 0
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    if stat.S_ISLNK(st.st_mode):
        target = os.readlink(full)
        resolved = (full.parent / target).resolve()
        if os.path.isabs(target) or not resolved.is_relative_to(real_top):
            raise ArenaError(f"{full}: symbolic link to {target} leads outside the bot directory")
        info.type, info.linkname, info.mode = tarfile.SYMTYPE, target, 0o777
        tar.addfile(info)
    elif stat.S_ISDIR(st.st_mode):
        info.type, info.mode = tarfile.DIRTYPE, 0o755
        tar.addfile(info)
    elif stat.S_ISREG(st.st_mode):
        info.mode = 0o755 if st.st_mode & 0o111 else 0o644
        info.size = st.st_size
        with full.open("rb") as f:
            tar.addfile(info, f)
    else:
        raise ArenaError(f"{full}: not a regular file, directory or link; remove it")


# -- storage ---------------------------------------------------------------------------------


class BlobStore:
    """Accepted archives, one file each, named by the sha256 of its bytes.

    Content addressing makes a store idempotent (the same upload twice is one file) and
    self-checking (`get` recomputes the hash; a mismatch is disk corruption, the platform's
    fault). Writes go to a temporary file in the same directory, are fsynced and renamed
    into place, so a reader never sees half a blob even if the server dies mid-write.
    """

    def __init__(self, root: str | os.PathLike[str], caps: ArchiveCaps | None = None) -> None:
        self.root = Path(root)
        self.caps = caps or ArchiveCaps()

    def path(self, sha: str) -> Path:
        if not _SHA256.fullmatch(sha):
            raise LeagueError(f"not a sha256 hex digest: {sha!r}", status=404)
        return self.root / sha[:2] / sha

    def put(self, data: bytes) -> str:
        """Store `data` (whatever it is: check it with inspect_archive first); its sha256."""
        sha = hashlib.sha256(data).hexdigest()
        final = self.path(sha)
        if final.exists():
            return sha
        final.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".blob-", dir=final.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, final)
            dir_fd = os.open(final.parent, os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.fsync(dir_fd)  # the rename itself survives a power loss
            finally:
                os.close(dir_fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        return sha

    def get(self, sha: str) -> bytes:
        """The blob's bytes, hash verified. LeagueError 404 for an unknown blob, PlatformFault
        for one whose bytes no longer match their name."""
        try:
            data = self.path(sha).read_bytes()
        except FileNotFoundError:
            raise LeagueError(f"no such archive {sha}", status=404) from None
        if hashlib.sha256(data).hexdigest() != sha:
            raise PlatformFault(f"archive {sha} is corrupt on disk (hash mismatch)")
        return data

    def unpack(self, sha: str, dest: Path) -> ArchiveInfo:
        """Unpack a stored archive into `dest` (see `unpack_archive`), checked again."""
        return unpack_archive(self.get(sha), dest, self.caps)
