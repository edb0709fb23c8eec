"""What the league does, as one object the API, the CLI and the pages call.

Every method is one use case (authenticate, read the leaderboard, add a version, disable a
bot...): it opens one transaction, calls the query functions of arena/league/db/ and turns "not
found", "not yours" and "not allowed" into `LeagueError`s with their HTTP status, so the web
layer only parses requests and serialises answers (and reads `db.views` through `read`). The
async methods run the blocking database work in a worker thread (`trio.to_thread.run_sync`);
the sync ones serve the CLI.

Access rules: reads are public except a bot's stderr, logs and build output (a game's, and
those quoted by its validation report), which only the bot's owner (or an admin) sees: the
public views of records, reports and reasons are made in `privacy`, which also keeps server
paths out of everything shown. Writes need a token; a disabled account is refused like a bad
token.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import secrets
import shutil
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import trio

from arena.league import candidates, privacy
from arena.league.archives import (
    ArchiveCaps,
    BlobStore,
    inspect_archive,
    pack_bot_dir,
    unpack_archive,
)
from arena.league.db import finals, fleet, ledger, roster, schema, seasons, verdicts, views
from arena.league.db.database import Database
from arena.league.db.roster import User, Version
from arena.league.errors import LeagueError
from arena.league.live import LiveGames, Signal, Validations
from arena.league.ratings import official_table
from arena.league.settings import LeagueSettings
from arena.referee.outcome import now_iso

T = TypeVar("T")

#: seconds before versions whose validation the platform voided are tried again
VALIDATION_RETRY = 30.0

#: bot and user names: what fits in a URL path segment and a leaderboard cell
NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")


def check_name(name: str, what: str, field: str | None = None) -> str:
    if not 1 <= len(name) <= 64 or not set(name) <= NAME_CHARS or name[0] in "-.":
        raise LeagueError(
            f"{what} {name!r}: use 1 to 64 letters, digits, '-', '_' or '.', not starting "
            "with '-' or '.'",
            status=422,
            field=field,
        )
    return name


def new_token() -> str:
    return "arena_" + secrets.token_urlsafe(32)


def manifest_summary(spec: Any, league_name: str) -> dict[str, Any]:
    """What the league keeps of a bot's manifest: shown in the API, and the limits it asked for
    (capped by the league's at play time)."""
    return {
        "name": spec.name,
        "league_name": league_name,
        "version": spec.version,
        "author": spec.author,
        "command": list(spec.command),
        "encoding": spec.encoding,
        "limits": dataclasses.asdict(spec.limits),
    }


class ReadCache:
    """Answers of public reads kept for at most `ttl` seconds and dropped as soon as a result
    is recorded here (`changed`): a leaderboard asked for 500 times a second is then computed
    a few times a second. Results recorded by remote workers show within `ttl`."""

    def __init__(self, ttl: float = 1.0, size: int = 1024) -> None:
        self.ttl = ttl
        self.size = size
        self.generation = 0
        self._entries: dict[Any, tuple[int, float, Any]] = {}
        self._making: dict[Any, trio.Event] = {}

    def changed(self) -> None:
        self.generation += 1

    def get(self, key: Any) -> Any | None:
        hit = self._entries.get(key)
        if hit is None or hit[0] != self.generation or time.monotonic() - hit[1] > self.ttl:
            return None
        return hit[2]

    def put(self, key: Any, value: Any, generation: int | None = None) -> None:
        """Keep `value`, made from the data as of `generation` (default: now)."""
        if len(self._entries) >= self.size:
            self._entries.clear()
        gen = self.generation if generation is None else generation
        self._entries[key] = (gen, time.monotonic(), value)

    async def get_or_make(
        self,
        key: Any,
        make: Callable[[], Awaitable[T]],
        keep: Callable[[T], bool] = lambda _: True,
    ) -> T:
        """The kept answer, else `make()`'s (kept if `keep` says so). Requests that miss the
        same key at once share one `make`, the others waiting for it: when a recorded result
        drops a busy leaderboard it is read again once, not once per waiting request. An answer
        is kept under the generation its read started in, so one that a result recorded
        meanwhile has made stale is not served as fresh."""
        while (value := self.get(key)) is None:
            pending = self._making.get(key)
            if pending is not None:
                await pending.wait()
                continue  # kept by then, unless it failed, was not kept or is stale already
            done = self._making[key] = trio.Event()
            generation = self.generation
            try:
                value = await make()
            finally:
                del self._making[key]
                done.set()
            if keep(value):
                self.put(key, value, generation)
            return value
        return value


class League:
    """One league: its settings and its database."""

    def __init__(self, settings: LeagueSettings, db: Database) -> None:
        self.settings = settings
        self.db = db
        self.variants = [g.label for g in settings.games]
        #: called after a version becomes active (the scheduler wakes up)
        self.on_activated: Callable[[], None] = lambda: None
        self._validate_wake = trio.Event()
        #: public reads (leaderboard, lists) served from memory for up to a second
        self.cache = ReadCache()
        #: games in flight on this server, turn by turn, and validations as they run (pages)
        self.live = LiveGames()
        self.validations = Validations()
        #: bumped after every outcome this server records (`recorded`): the submission pages
        #: follow their candidate verdicts by it
        self.results = Signal()
        from arena.league.challenges import Challenges

        #: the games people play against bots in their browsers (the /play pages)
        self.challenges = Challenges(self)

    # --- plumbing -----------------------------------------------------------------------------

    def recorded(self) -> None:
        """An outcome was recorded here (the scheduler's `on_recorded`): public reads are stale,
        verdicts may have moved."""
        self.cache.changed()
        self.results.bump()

    def read_sync(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        with self.db.read() as conn:
            return fn(conn, *args, **kwargs)

    def write_sync(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        with self.db.write() as conn:
            return fn(conn, *args, **kwargs)

    async def read(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return await trio.to_thread.run_sync(lambda: self.read_sync(fn, *args, **kwargs))

    async def cached_read(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """`read` through the cache: for public answers only (never one that depends on who
        asks). The value is shared between requests: callers must not modify it."""
        key = (fn, args, tuple(sorted(kwargs.items())))
        return await self.cache.get_or_make(key, lambda: self.read(fn, *args, **kwargs))

    async def write(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return await trio.to_thread.run_sync(lambda: self.write_sync(fn, *args, **kwargs))

    def check_variant(self, variant: str) -> str:
        if variant not in self.variants:
            raise LeagueError(
                f"unknown variant {variant!r} (this league plays: {', '.join(self.variants)})",
                status=404,
                field="variant",
            )
        return variant

    # --- accounts -----------------------------------------------------------------------------

    def add_user(self, name: str, *, is_admin: bool = False) -> tuple[User, str]:
        """Create an account; the token is returned once and only its hash is stored."""
        check_name(name, "user name", "name")
        token = new_token()

        def add(conn: Any) -> User:
            if roster.user_by_name(conn, name) is not None:
                raise LeagueError(f"user {name!r} exists already", status=409, field="name")
            return roster.add_user(conn, name, token, is_admin=is_admin)

        return self.write_sync(add), token

    async def authenticate(self, header: str | None) -> User:
        """The user of an `Authorization: Bearer TOKEN` header; 401 if missing or wrong."""
        if not header:
            raise LeagueError("missing bearer token (Authorization: Bearer TOKEN)", status=401)
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise LeagueError("expected 'Authorization: Bearer TOKEN'", status=401)
        user = await self.read(roster.user_by_token, token.strip())
        if user is None or user.disabled:
            raise LeagueError("invalid or disabled token", status=401)
        return user

    async def user(self, user_id: int) -> User | None:
        """The account of a login session (web/auth.py checks it is enabled and current)."""
        return await self.read(roster.user_by_id, user_id)

    async def token_user(self, token: str) -> User | None:
        """The account of an API token, as the login form takes it (None: no such token)."""
        return await self.read(roster.user_by_token, token)

    async def end_sessions(self, user: User) -> None:
        """End every login session of the account (its cookies carry the old epoch)."""
        await self.write(roster.end_sessions, user.id)

    def session_secret_sync(self) -> str:
        """The key login cookies are signed with, made on first use and kept in the database,
        so every server process of the league accepts the same cookies (web/auth.py)."""
        return self.write_sync(fleet.secret, fleet.SESSION_SECRET)

    def set_user_disabled_sync(self, name: str, disabled: bool) -> None:
        def run(conn: Any) -> None:
            user = roster.user_by_name(conn, name)
            if user is None:
                raise LeagueError(f"no user {name!r}", status=404)
            roster.set_user_disabled(conn, user.id, disabled)

        self.write_sync(run)

    def rotate_token_sync(self, name: str) -> str:
        """A new API token for the account (returned once; the old one stops working) and the
        end of every login session opened with the old one."""
        token = new_token()

        def run(conn: Any) -> None:
            user = roster.user_by_name(conn, name)
            if user is None:
                raise LeagueError(f"no user {name!r}", status=404)
            roster.set_token(conn, user.id, token)

        self.write_sync(run)
        return token

    # --- reads --------------------------------------------------------------------------------

    async def leaderboard(
        self,
        variant: str,
        *,
        limit: int,
        offset: int,
        include_retired: bool = False,
        season: str | None = None,
    ) -> list[dict[str, Any]]:
        """The live leaderboard, or a season's (`season`: its name): a closed season's as it
        stood at its close, the open season's live."""
        self.check_variant(variant)
        if season is not None:
            found = await self.season(season)
            if found.state == schema.SeasonState.CLOSED:
                return await self.cached_read(
                    seasons.kept_leaderboard,
                    found.id,
                    variant,
                    limit=limit,
                    offset=offset,
                    include_retired=include_retired,
                )
        return await self.cached_read(
            views.leaderboard,
            variant,
            limit=limit,
            offset=offset,
            include_retired=include_retired,
        )

    # --- seasons (arena/league/db/seasons.py) ----------------------------------------------------

    async def season(self, name: str) -> seasons.Season:
        found = await self.read(seasons.by_name, name)
        if found is None:
            raise LeagueError(f"no season {name!r}", status=404, field="season")
        return found

    async def season_list(self) -> list[dict[str, Any]]:
        return [s.to_dict() for s in await self.read(seasons.all_seasons)]

    def open_season_sync(self, name: str) -> seasons.Season:
        check_name(name, "season name", "name")
        return self.write_sync(seasons.open_season, name, self.variants)

    def close_season_sync(self) -> seasons.Season:
        return self.write_sync(seasons.close_season)

    async def open_season(self, user: User, name: str) -> seasons.Season:
        self.check_admin(user)
        check_name(name, "season name", "name")
        done = await self.write(seasons.open_season, name, self.variants)
        self.cache.changed()
        return done

    async def close_season(self, user: User) -> seasons.Season:
        self.check_admin(user)
        done = await self.write(seasons.close_season)
        self.cache.changed()
        return done

    # --- finals (arena/league/db/finals.py) ------------------------------------------------------

    def _final_summaries(self, conn: Any, season: str | None) -> list[dict[str, Any]]:
        names = {s.id: s.name for s in seasons.all_seasons(conn)}
        sid = None
        if season is not None:
            found = seasons.by_name(conn, season)
            if found is None:
                raise LeagueError(f"no season {season!r}", status=404, field="season")
            sid = found.id
        return [finals.summary(conn, f, names[f.season_id]) for f in finals.listing(conn, sid)]

    async def finals(self, season: str | None) -> list[dict[str, Any]]:
        """The finals, newest first (of one season, by name)."""
        return await self.read(self._final_summaries, season)

    def _final_detail(self, conn: Any, final_id: int) -> dict[str, Any]:
        final = finals.get(conn, final_id)
        if final is None:
            raise LeagueError(f"no final {final_id}", status=404)
        names = {s.id: s.name for s in seasons.all_seasons(conn)}
        return finals.detail(conn, final, names[final.season_id])

    async def final(self, final_id: int) -> dict[str, Any]:
        return await self.read(self._final_detail, final_id)

    def final_sync(self, final_id: int) -> dict[str, Any]:
        return self.read_sync(self._final_detail, final_id)

    def start_final_sync(
        self, *, season: str, variant: str, top: int, fmt: str, pairs: int, extra_pairs: int = 1
    ) -> dict[str, Any]:
        self.check_variant(variant)

        def run(conn: Any) -> dict[str, Any]:
            f = finals.start(
                conn,
                self.settings,
                season=season,
                variant=variant,
                top=top,
                fmt=fmt,
                pairs=pairs,
                extra_pairs=extra_pairs,
            )
            return self._final_detail(conn, f.id)

        done = self.write_sync(run)
        self.on_activated()  # the scheduler looks at the queue now
        return done

    async def start_final(
        self,
        user: User,
        *,
        season: str,
        variant: str,
        top: int,
        fmt: str,
        pairs: int,
        extra_pairs: int = 1,
    ) -> dict[str, Any]:
        self.check_admin(user)
        return await trio.to_thread.run_sync(
            lambda: self.start_final_sync(
                season=season,
                variant=variant,
                top=top,
                fmt=fmt,
                pairs=pairs,
                extra_pairs=extra_pairs,
            )
        )

    def stop_final_sync(self, final_id: int) -> dict[str, Any]:
        def run(conn: Any) -> dict[str, Any]:
            finals.stop(conn, final_id)
            return self._final_detail(conn, final_id)

        return self.write_sync(run)

    async def stop_final(self, user: User, final_id: int) -> dict[str, Any]:
        self.check_admin(user)
        return await trio.to_thread.run_sync(self.stop_final_sync, final_id)

    def advance_finals_sync(self) -> int:
        """Queue the games the running finals want now (the server calls it every second)."""
        with self.db.read() as conn:
            if not finals.running(conn):
                return 0
        return self.write_sync(finals.advance, self.settings)

    @staticmethod
    def check_admin(user: User) -> None:
        if not user.is_admin:
            raise LeagueError("only an admin may do this", status=403)

    async def bots(self, *, limit: int, offset: int) -> list[dict[str, Any]]:
        return await self.cached_read(views.list_bots, limit=limit, offset=offset)

    async def bot(self, name: str) -> dict[str, Any]:
        def run(conn: Any) -> dict[str, Any] | None:
            detail = views.bot_detail(conn, name)
            if detail is not None:
                detail["verdicts"] = candidates.bot_verdicts(conn, detail["id"])
            return detail

        detail = await self.read(run)
        if detail is None:
            raise LeagueError(f"no bot {name!r}", status=404)
        detail.pop("owner_id")
        detail.pop("id")
        detail.pop("disabled_by")
        detail["versions"] = [self.shown_version(v) for v in detail["versions"]]
        return detail

    def version_state(self, state: str, version_id: int) -> str:
        """A version's state in the words the pages and the API share: `queued` (waiting to
        be validated), `validating` (being validated now), `active`, `rejected` (failed its
        validation), `retired`, `disabled` (and `human`, a person's seat)."""
        if state == schema.VersionState.VALIDATING:
            return "validating" if self.validations.current == version_id else "queued"
        if state == schema.VersionState.FAILED:
            return "rejected"
        return str(state)

    def applied_limits(self, requested: dict[str, Any] | None) -> dict[str, Any]:
        """The limits a version plays under: its manifest's request (unset keys at their
        most) capped by this league's `[limits]`, key by key."""
        from arena.sandbox import Limits

        known = {f.name for f in dataclasses.fields(Limits)}
        asked = {k: v for k, v in (requested or {}).items() if k in known}
        try:
            mine = Limits(**asked)
        except (TypeError, ValueError):
            mine = Limits.requested()
        return dataclasses.asdict(mine.capped_by(self.settings.limits))

    def shown_version(self, summary: dict[str, Any]) -> dict[str, Any]:
        """A `views.version_summary` as the API shows it: the shared state word, the limits
        that apply."""
        out = dict(summary)
        out["state"] = self.version_state(summary["state"], summary["id"])
        manifest = dict(out.get("manifest") or {})
        if "limits" in manifest:
            manifest["limits"] = self.applied_limits(manifest["limits"])
        out["manifest"] = manifest
        return out

    @staticmethod
    def sees_private(user: User | None, owner_id: int) -> bool:
        """Whether `user` may read a bot's stderr, logs and build output: its owner or an
        admin."""
        return user is not None and (user.is_admin or user.id == owner_id)

    async def version(self, name: str, number: int, user: User | None = None) -> dict[str, Any]:
        """One version; its validation report in full (server paths neutral) for its owner or
        an admin, without the bot's stderr and build output for anyone else."""

        def run(conn: Any) -> dict[str, Any]:
            v = self._version(conn, name, number)
            out = self.shown_version(views.version_summary(v))
            if self.sees_private(user, v.owner_id):
                out["validation"] = privacy.owner_report(v.validation, v.path or None)
            else:
                out["validation"] = privacy.public_report(v.validation)
            out["ratings"] = views.version_ratings(conn, v.id)
            out["verdicts"] = candidates.version_verdicts(conn, v.id)
            return out

        return await self.read(run)

    def _version(self, conn: Any, name: str, number: int) -> Version:
        bot = roster.bot_by_name(conn, name)
        if bot is None:
            raise LeagueError(f"no bot {name!r}", status=404)
        v = roster.version_by_number(conn, bot.id, number)
        if v is None:
            raise LeagueError(f"bot {name!r} has no version {number}", status=404)
        return v

    async def games(
        self,
        *,
        limit: int,
        offset: int,
        bot: str | None = None,
        variant: str | None = None,
        outcome: str | None = None,
        since: str | None = None,
        until: str | None = None,
        reason: str | None = None,
        season: str | None = None,
    ) -> list[dict[str, Any]]:
        """Finished games, newest first; `since`/`until` are timestamps as the tables keep
        them (arena/league/when.py)."""
        if variant is not None:
            self.check_variant(variant)
        if outcome is not None and bot is None:
            raise LeagueError("filtering by result needs a bot (?bot=NAME)", field="result")
        season_id = None if season is None else (await self.season(season)).id
        extra = {"since": since, "until": until, "reason": reason, "season_id": season_id}
        return await self.cached_read(_games_page, limit, offset, bot, variant, outcome, **extra)

    async def game(self, game_id: int) -> dict[str, Any]:
        detail = await self.read(views.game_detail, game_id)
        if detail is None:
            raise LeagueError(f"no game {game_id}", status=404)
        detail.pop("owners")
        return detail

    async def record(self, game_id: int) -> dict[str, Any]:
        """The game's arena-record/1, without the bots' stderr and logs (owner-only)."""
        record = await self.read(ledger.game_record, game_id)
        if record is None:
            raise LeagueError(f"no record for game {game_id} (not finished?)", status=404)
        return privacy.public_record(record)

    async def owner_record(
        self, user: User | None, game_id: int
    ) -> tuple[dict[str, Any], list[int]] | None:
        """The game's record with the logs, debug marks and stderr of the caller's own bots
        (every bot's for an admin: privacy.owner_record), and their seats; None when the
        caller owns none of them or the game has no record."""
        if user is None:
            return None

        detail, record, paths = await self.read(_game_with_record, game_id)
        if detail is None or record is None:
            return None
        mine = [s for s, owner in enumerate(detail["owners"]) if owner == user.id or user.is_admin]
        if not mine:
            return None
        return privacy.owner_record(record, mine, dict(enumerate(paths))), mine

    async def logs(self, user: User, game_id: int) -> dict[str, Any]:
        """The stderr and log lines of the caller's own bot(s) in a game (403 otherwise)."""

        detail, record, paths = await self.read(_game_with_record, game_id)
        if detail is None:
            raise LeagueError(f"no game {game_id}", status=404)
        mine = [s for s, owner in enumerate(detail["owners"]) if owner == user.id or user.is_admin]
        if not mine:
            raise LeagueError("these logs belong to the bots' owners", status=403)
        seats = []
        for s in mine:
            seats.append(
                {
                    "seat": s,
                    "bot": detail["seats"][s]["bot"],
                    "version": detail["seats"][s]["version"],
                    "stderr": privacy.neutral_paths(
                        (record or {}).get("stderr", ["", ""])[s], [paths[s]]
                    ),
                    "logs": [e for e in (record or {}).get("logs", []) if e.get("seat") == s],
                    "marks": [e for e in (record or {}).get("marks", []) if e.get("seat") == s],
                }
            )
        return {"game": game_id, "state": detail["state"], "seats": seats}

    async def queue(self, *, limit: int, offset: int) -> dict[str, Any]:
        def run(conn: Any) -> dict[str, Any]:
            return {
                "counts": views.counts(conn),
                "items": views.queue(conn, limit=limit, offset=offset),
            }

        return await self.read(run)

    # --- versions -----------------------------------------------------------------------------

    def check_submitter(self, conn: Any, user: User, bot_name: str) -> None:
        """A bot name belongs to whoever submitted it first; 403 for anyone else."""
        bot = roster.bot_by_name(conn, bot_name)
        if bot is not None and bot.owner_id != user.id:
            raise LeagueError(
                f"bot {bot_name!r} belongs to another user; choose another name",
                status=403,
                field="name",
            )
        if bot is not None and bot.disabled:
            who = "retired by you" if bot.disabled_by == "owner" else "disabled by an admin"
            raise LeagueError(f"bot {bot_name!r} is {who}", status=403)
        finals.check_unfrozen(conn, bot_name)  # a finalist's submissions wait for the final

    def check_rate(self, conn: Any, user: User) -> None:
        since = (datetime.now(UTC) - timedelta(hours=1)).isoformat(timespec="milliseconds")
        since = since.replace("+00:00", "Z")
        n = roster.submissions_since(conn, user.id, since)
        if n >= self.settings.submissions.per_hour:
            raise LeagueError(
                f"{n} submissions in the last hour; this league allows "
                f"{self.settings.submissions.per_hour} per hour",
                status=429,
            )

    def register_version(
        self,
        user: User,
        bot_name: str,
        bot_dir: Path,
        archive: bytes,
        spec: Any,
        *,
        rate_limited: bool = True,
    ) -> Version:
        """Record a new version (validating), keep its archive and move its unpacked directory
        into place, all before the version's row is committed: a version is never visible (to
        the validation loop, to workers) before its files are there, and a refused one leaves
        nothing behind.

        The refusals (another user's bot name, the hourly rate) are checked in a read first,
        so a refused upload writes nothing; the write transaction checks them again (another
        submission may have won the name meanwhile) and, if anything fails after files were
        written, removes them: the archive only if this call made it and no committed version
        uses it (the same archive may belong to an earlier version)."""
        check_name(bot_name, "bot name", "name")

        def check(conn: Any) -> None:
            self.check_submitter(conn, user, bot_name)
            if rate_limited:
                self.check_rate(conn, user)

        self.read_sync(check)
        blobs = BlobStore(self.settings.archives_dir)
        sha = hashlib.sha256(archive).hexdigest()
        made_blob = False
        final: Path | None = None
        try:
            with self.db.write() as conn:
                check(conn)
                v = roster.add_version(
                    conn,
                    owner_id=user.id,
                    bot_name=bot_name,
                    archive_sha256=sha,
                    path="",
                    manifest=manifest_summary(spec, bot_name),
                )
                final = self.settings.bots_dir / str(v.id)
                final.parent.mkdir(parents=True, exist_ok=True)
                if final.exists():  # left by a crash between a move and its commit
                    shutil.rmtree(final)
                made_blob = not blobs.path(sha).exists()
                blobs.put(archive)
                shutil.move(str(bot_dir), final)
                roster.set_version_path(conn, v.id, str(final))
        except BaseException:
            if final is not None and final.exists():
                shutil.rmtree(final, ignore_errors=True)
            if made_blob and not self.read_sync(roster.archive_in_use, sha):
                blobs.path(sha).unlink(missing_ok=True)
            raise
        return dataclasses.replace(v, path=str(final))

    def archive_caps(self) -> Any:
        sub = self.settings.submissions
        return ArchiveCaps(
            max_bytes=sub.max_archive_mb << 20,
            max_members=sub.max_members,
            max_unpacked_bytes=sub.max_unpacked_mb << 20,
        )

    async def submit(self, user: User, data: bytes) -> dict[str, Any]:
        """A submitted archive becomes a new version, validating; validation runs in the
        background (`run_validations`) and the answer says where to follow it."""
        await self.read(self.check_rate, user)
        v = await trio.to_thread.run_sync(self._submit_sync, user, data)
        self.on_submitted()
        return {
            "id": v.id,
            "bot": v.bot,
            "version": v.number,
            "state": self.version_state(v.state, v.id),
            "status": self.version_state(v.state, v.id),
            "url": f"/api/v1/bots/{v.bot}/versions/{v.number}",
        }

    def _submit_sync(self, user: User, data: bytes) -> Version:
        """Check, unpack and load the manifest in a private directory; only an accepted
        archive is kept (`register_version`): a refusal leaves nothing on disk."""
        from arena.league.validation import load_submitted_bot

        caps = self.archive_caps()
        inspect_archive(data, caps)  # every check before anything touches the disk
        self.settings.bots_dir.mkdir(parents=True, exist_ok=True)
        incoming = Path(tempfile.mkdtemp(prefix=".incoming-", dir=self.settings.bots_dir))
        try:
            unpack_archive(data, incoming / "bot", caps)
            spec = load_submitted_bot(incoming / "bot")
            check_name(spec.name, "bot name (the manifest's `name`)", "bot.toml")
            return self.register_version(user, spec.name, incoming / "bot", data, spec)
        finally:
            shutil.rmtree(incoming, ignore_errors=True)

    async def run_validations(self, wake: trio.Event | None = None) -> None:
        """Validate every version waiting for it, oldest first, one at a time, forever.

        The queue is the database (versions in state validating), so a server killed during a
        validation validates that version again at its next start. A platform fault leaves the
        version waiting and is retried on the next pass.
        """
        while True:
            self._validate_wake = trio.Event()
            for v in await self.read(roster.versions_in_state, schema.VersionState.VALIDATING):
                self.validations.current = v.id
                self.validations.signal.bump()
                try:
                    await self.validate(v)
                finally:
                    self.validations.current = None
                    self.validations.step = ""
                    self.validations.signal.bump()
            with trio.move_on_after(VALIDATION_RETRY):
                await self._validate_wake.wait()

    def on_submitted(self) -> None:
        self._validate_wake.set()
        self.validations.signal.bump()

    async def validate(self, v: Version) -> None:
        from arena.league.errors import PlatformFault
        from arena.league.validation import validate_version

        try:
            report = await validate_version(
                Path(v.path),
                [(g.name, dict(g.options)) for g in self.settings.games],
                self.settings.limits,
                self.settings.submissions.validation_time_control,
                isolation=self.settings.isolation,
                on_step=self.validations.on_step,
            )
        except PlatformFault as e:
            print(f"arena league: validation of {v.bot} v{v.number} voided: {e}", file=sys.stderr)
            return
        await trio.to_thread.run_sync(self.finish_validation_sync, v.id, report.to_dict())

    def finish_validation_sync(self, version_id: int, report: dict[str, Any]) -> bool:
        """Store the report; a passing version becomes active and, in the same transaction,
        its candidate tests against the version it replaces open (arena/league/candidates.py)."""
        passed = bool(report.get("passed"))

        def run(conn: Any) -> bool:
            previous = verdicts.previous_active(conn, version_id)
            done = roster.finish_validation(conn, version_id, report, passed, self.variants)
            if done and passed:
                candidates.open_tests(conn, self.settings, version_id, previous)
            return done

        done = self.write_sync(run)
        self.cache.changed()
        if done and passed:
            self.on_activated()
        return done

    def add_house_bot(self, owner: str, bot_dir: Path) -> Version:
        """Operator path (`arena league bot add`): a trusted bot directory joins the ladder
        directly, built here and not validated (the operator vouches for it).

        The source folder is only read: it is packed (without the build step's output, which
        every machine that plays the bot makes again from the sources), the archive is
        unpacked into the league's own directory as a submission is, and built there."""
        from arena.referee import load_bot

        spec = load_bot(bot_dir)
        user = self.read_sync(roster.user_by_name, owner)
        if user is None:
            raise LeagueError(f"no user {owner!r} (create it with 'arena league user add')")
        # packed into the archive store like a submission, so workers on other machines fetch
        # it by hash (arena/league/botcache.py)
        data = pack_bot_dir(bot_dir, skip=build_outputs(spec))
        self.settings.bots_dir.mkdir(parents=True, exist_ok=True)
        incoming = Path(tempfile.mkdtemp(prefix=".incoming-", dir=self.settings.bots_dir))
        try:
            # the operator's own bot: no size caps, but every path rule of a submission
            trusted = ArchiveCaps(
                max_bytes=1 << 62,
                max_unpacked_bytes=1 << 62,
                max_members=1 << 30,
                max_ratio=float("inf"),
            )
            unpack_archive(data, incoming / "bot", trusted)
            load_bot(incoming / "bot").ensure_built()
            v = self.register_version(
                user, spec.name, incoming / "bot", data, spec, rate_limited=False
            )
        finally:
            shutil.rmtree(incoming, ignore_errors=True)
        self.finish_validation_sync(
            v.id,
            {
                "passed": True,
                "stage": "passed",
                "problem": None,
                "games": [],
                "warnings": ["added by the operator with `arena league bot add`; not validated"],
            },
        )
        return v

    async def disable_bot(self, user: User, name: str, disabled: bool = True) -> None:
        if not user.is_admin:
            raise LeagueError("only admins can disable bots", status=403)
        await self._set_bot_disabled(user, name, disabled, owner_may=False)

    async def retire_bot(self, user: User, name: str, retired: bool = True) -> None:
        """The bot page's retire/reactivate: its owner (or an admin) takes it off the ladder or
        puts it back; a bot an admin disabled stays disabled until an admin enables it."""
        await self._set_bot_disabled(user, name, retired, owner_may=True)

    async def _set_bot_disabled(
        self, user: User, name: str, disabled: bool, *, owner_may: bool
    ) -> None:
        def run(conn: Any) -> None:
            bot = roster.bot_by_name(conn, name)
            if bot is None:
                raise LeagueError(f"no bot {name!r}", status=404)
            owner = owner_may and bot.owner_id == user.id
            if not (user.is_admin or owner):
                raise LeagueError("only the bot's owner or an admin can do this", status=403)
            if not user.is_admin and bot.disabled and bot.disabled_by != "owner":
                raise LeagueError(f"bot {name!r} is disabled by an admin", status=403)
            by = "owner" if owner else "admin"
            roster.set_bot_disabled(conn, bot.id, disabled, by)
            verdicts.stop_orphaned(conn)  # a version that left the ladder ends its tests
            if disabled and by == "admin":  # disqualified from any final it plays in
                finals.disqualify(conn, bot.id)

        await self.write(run)
        self.cache.changed()
        if not disabled:
            self.on_activated()
            self.on_submitted()

    async def disable_user(self, user: User, name: str, disabled: bool = True) -> None:
        if not user.is_admin:
            raise LeagueError("only admins can disable users", status=403)
        await trio.to_thread.run_sync(self.set_user_disabled_sync, name, disabled)

    # --- official ratings ---------------------------------------------------------------------

    def refit_official_sync(self) -> None:
        """Refit the Bradley-Terry table of every variant from the open season's rated games
        (all of them in a league without seasons; nothing between seasons: the closed
        season's table is kept with it, arena/league/db/seasons.py)."""
        with self.db.read() as conn:
            season = seasons.current(conn)
            if season is None and seasons.all_seasons(conn):
                return
        for variant in self.variants:
            with self.db.read() as conn:
                pairs = ledger.pair_results(conn, variant, season.id if season else None)
            ids = sorted({a for a, _, _, _ in pairs} | {b for _, b, _, _ in pairs})
            table = official_table(ids, pairs) if ids else None
            now = now_iso()
            rows = []
            if table is not None:
                for r in table.ratings:
                    rows.append(
                        {
                            "version_id": int(r.name),
                            "elo": r.elo,
                            "ci95": r.ci95,
                            "games": r.games,
                            "points": r.points,
                            "computed_at": now,
                        }
                    )
            with self.db.write() as conn:
                ledger.replace_official(conn, variant, rows)

    # --- the worker fleet ----------------------------------------------------------------------

    async def fleet_status(self) -> dict[str, Any]:
        """Every worker with its state, load and counts, and the job queue's counts (the
        workers API and page: web/workers.py)."""
        # imported here: procrastinate's import costs every CLI command that opens the league
        # ~70 ms, and only the server (whose executors import it anyway) asks for the fleet
        from arena.league import queue

        def run(conn: Any) -> dict[str, Any]:
            after = float(fleet.get_meta(conn, "stalled_after") or fleet.STALLED_AFTER)
            has_queue = not self.db.is_sqlite and queue.schema_installed(conn)
            return {
                "stalled_after": after,
                "jobs": queue.job_counts(conn) if has_queue else {},
                "items": fleet.list_workers(conn, after),
            }

        return await self.read(run)

    @staticmethod
    def fleet_rules() -> dict[str, Any]:
        """The thresholds the workers page explains (arena/league/db/fleet.py)."""
        return {
            "recent": fleet.RECENT,
            "min_games": fleet.MIN_GAMES,
            "degraded_rate": fleet.DEGRADED_RATE,
            "server_slots": fleet.SERVER_SLOTS,
        }

    async def worker_secret(self) -> str | None:
        """The secret workers download archives with, if the server has published one."""
        return await self.read(fleet.get_meta, fleet.WORKER_SECRET)

    # --- status -------------------------------------------------------------------------------

    async def status(self) -> dict[str, Any]:
        counts = await self.read(views.counts)
        return {
            "name": self.settings.name,
            "variants": [
                {"label": g.label, "game": g.name, "options": dict(g.options)}
                for g in self.settings.games
            ],
            "time_control": self.settings.time_control.to_dict(),
            "games": counts,
        }


def bot_id_filter(conn: Any, bot: str | None) -> int | None:
    """The id of the bot a listing is filtered by (None: no filter); 404 naming the field if no
    such bot, for the API and the pages alike."""
    if bot is None:
        return None
    row = roster.bot_by_name(conn, bot)
    if row is None:
        raise LeagueError(f"no bot {bot!r}", status=404, field="bot")
    return row.id


def _game_with_record(
    conn: Any, game_id: int
) -> tuple[dict[str, Any] | None, dict[str, Any] | None, list[str]]:
    """A game's detail, its stored record and each seat's bot directory (which the owner's
    view neutralises in paths: privacy.owner_record), in one read."""
    detail = views.game_detail(conn, game_id)
    paths = []
    for seat in (detail or {}).get("seats", []):
        v = roster.version(conn, seat["version_id"])
        paths.append(v.path if v is not None else "")
    return detail, ledger.game_record(conn, game_id), paths


def _games_page(
    conn: Any,
    limit: int,
    offset: int,
    bot: str | None,
    variant: str | None,
    outcome: str | None,
    **filters: Any,
) -> list[dict[str, Any]]:
    bot_id = bot_id_filter(conn, bot)
    return views.list_games(
        conn,
        limit=limit,
        offset=offset,
        bot_id=bot_id,
        variant=variant,
        outcome=outcome,
        by_finish=True,
        **filters,
    )


def build_outputs(spec: Any) -> list[str]:
    """The files of a bot's directory its build step makes (relative paths), as far as the
    manifest names them: left out of the archive `bot add` packs, since every machine that
    plays the bot builds them again from its sources."""
    if not spec.build:
        return []
    output = spec._build_output()
    if output is None:
        return []
    rel = os.path.relpath(output, spec.manifest.parent if spec.manifest else spec.workdir)
    return [] if rel.startswith("..") else [rel]


def dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"))
