"""Who plays in the league: users and their tokens and login sessions, bots and their versions.

A user is an account with an API token (only its sha256 is kept) and a session epoch that ends
every login session at once when it changes (web/auth.py). A bot belongs to the user who first
submitted its name; each submission is a new version, `validating` until its report comes back,
then `active` (it plays rated games; its predecessor retires) or `failed`. Disabling a bot, by
its owner (retired) or an admin, takes its versions out of matchmaking and keeps its games. A
person who plays against bots in the browser is seated as a bot of their own
(`human_version`), so their games list and link like any other.

Every function takes a Connection inside the caller's transaction (arena/league/db/database.py).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from arena.league.db.ledger import ensure_rating
from arena.league.db.schema import HUMAN_PREFIX, VersionState, bots, ratings, users, versions
from arena.league.ratings import MU0
from arena.referee.outcome import now_iso

# --- users -----------------------------------------------------------------------------------


def hash_token(token: str) -> str:
    """Tokens are random 256-bit strings, so one unsalted sha256 is enough to store them."""
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class User:
    id: int
    name: str
    is_admin: bool
    disabled: bool
    #: the account's login sessions carry this; bumping it ends them all
    session_epoch: int = 0


def add_user(conn: Connection, name: str, token: str, *, is_admin: bool = False) -> User:
    uid = conn.execute(
        users.insert().values(
            name=name,
            token_hash=hash_token(token),
            is_admin=is_admin,
            disabled=False,
            created_at=now_iso(),
        )
    ).inserted_primary_key[0]
    return User(uid, name, is_admin, False)


def user_by_name(conn: Connection, name: str) -> User | None:
    row = conn.execute(sa.select(users).where(users.c.name == name)).first()
    return None if row is None else _user(row)


def user_by_id(conn: Connection, user_id: int) -> User | None:
    row = conn.execute(sa.select(users).where(users.c.id == user_id)).first()
    return None if row is None else _user(row)


def user_by_token(conn: Connection, token: str) -> User | None:
    row = conn.execute(sa.select(users).where(users.c.token_hash == hash_token(token))).first()
    return None if row is None else _user(row)


def _user(row: Any) -> User:
    return User(row.id, row.name, row.is_admin, row.disabled, row.session_epoch)


def set_user_disabled(conn: Connection, user_id: int, disabled: bool) -> bool:
    """Disable (or enable) an account; disabling also ends all its login sessions."""
    values: dict[str, Any] = {"disabled": disabled}
    if disabled:
        values["session_epoch"] = users.c.session_epoch + 1
    return conn.execute(users.update().where(users.c.id == user_id).values(**values)).rowcount == 1


def end_sessions(conn: Connection, user_id: int) -> None:
    """End every login session of the account (its cookies carry the old epoch)."""
    conn.execute(
        users.update().where(users.c.id == user_id).values(session_epoch=users.c.session_epoch + 1)
    )


def set_token(conn: Connection, user_id: int, token: str) -> None:
    """Replace the account's API token (only its hash is kept) and end its login sessions:
    a session was opened with the old token."""
    conn.execute(
        users.update()
        .where(users.c.id == user_id)
        .values(token_hash=hash_token(token), session_epoch=users.c.session_epoch + 1)
    )


# --- bots and versions -----------------------------------------------------------------------


@dataclass(frozen=True)
class Version:
    id: int
    bot_id: int
    bot: str
    owner_id: int
    number: int
    state: str
    path: str
    archive_sha256: str
    manifest: dict[str, Any]
    validation: dict[str, Any] | None
    created_at: str
    activated_at: str | None


def version_from_row(row: Any) -> Version:
    return Version(
        id=row.id,
        bot_id=row.bot_id,
        bot=row.bot,
        owner_id=row.owner_id,
        number=row.number,
        state=row.state,
        path=row.path,
        archive_sha256=row.archive_sha256,
        manifest=json.loads(row.manifest),
        validation=None if row.validation is None else json.loads(row.validation),
        created_at=row.created_at,
        activated_at=row.activated_at,
    )


VERSION_COLUMNS = (
    versions,
    bots.c.name.label("bot"),
    bots.c.owner_id,
)


def human_version(conn: Connection, user: User) -> int:
    """The version row that stands for a person in the games they play against bots.

    The games and seats tables hold versions, so a person gets a bot of their own, named
    "@" + their name (a character no bot name may use), with one version in state `human`:
    their games then list, link and filter like any other, while the state keeps the seat out
    of validation, matchmaking, ratings and the leaderboard, and the prefix out of the bot list.
    """
    name = HUMAN_PREFIX + user.name if len(user.name) < 64 else f"{HUMAN_PREFIX}user-{user.id}"
    bot = bot_by_name(conn, name)
    if bot is None:
        bot_id = conn.execute(
            bots.insert().values(name=name, owner_id=user.id, disabled=False, created_at=now_iso())
        ).inserted_primary_key[0]
    else:
        bot_id = bot.id
    vid = conn.execute(
        sa.select(versions.c.id).where(
            versions.c.bot_id == bot_id, versions.c.state == VersionState.HUMAN
        )
    ).scalar()
    if vid is not None:
        return int(vid)
    number = 1 + (
        conn.execute(
            sa.select(sa.func.max(versions.c.number)).where(versions.c.bot_id == bot_id)
        ).scalar()
        or 0
    )
    manifest = {"name": name, "league_name": name, "kind": "human", "author": user.name}
    return int(
        conn.execute(
            versions.insert().values(
                bot_id=bot_id,
                number=number,
                state=VersionState.HUMAN,
                archive_sha256="",
                path="",
                manifest=json.dumps(manifest, sort_keys=True),
                created_at=now_iso(),
            )
        ).inserted_primary_key[0]
    )


def bot_by_name(conn: Connection, name: str) -> Any | None:
    return conn.execute(sa.select(bots).where(bots.c.name == name)).first()


def add_version(
    conn: Connection,
    *,
    owner_id: int,
    bot_name: str,
    archive_sha256: str,
    path: str,
    manifest: dict[str, Any],
) -> Version:
    """A new version (state validating) of the owner's bot, creating the bot if it is new.

    The caller checks ownership first (`bot_by_name`); the unique bot name makes a race between
    two users creating the same bot fail for one of them instead of sharing it.
    """
    bot = bot_by_name(conn, bot_name)
    if bot is None:
        bot_id = conn.execute(
            bots.insert().values(
                name=bot_name, owner_id=owner_id, disabled=False, created_at=now_iso()
            )
        ).inserted_primary_key[0]
        number = 1
    else:
        bot_id = bot.id
        number = 1 + (
            conn.execute(
                sa.select(sa.func.max(versions.c.number)).where(versions.c.bot_id == bot_id)
            ).scalar()
            or 0
        )
    vid = conn.execute(
        versions.insert().values(
            bot_id=bot_id,
            number=number,
            state=VersionState.VALIDATING,
            archive_sha256=archive_sha256,
            path=path,
            manifest=json.dumps(manifest, sort_keys=True),
            created_at=now_iso(),
        )
    ).inserted_primary_key[0]
    v = version(conn, vid)
    assert v is not None
    return v


def archive_in_use(conn: Connection, sha: str) -> bool:
    """Whether a version was made from the archive of this sha256 (one archive may serve
    several versions: the same upload twice)."""
    row = conn.execute(sa.select(versions.c.id).where(versions.c.archive_sha256 == sha).limit(1))
    return row.first() is not None


def set_version_path(conn: Connection, version_id: int, path: str) -> None:
    conn.execute(versions.update().where(versions.c.id == version_id).values(path=path))


def version(conn: Connection, version_id: int) -> Version | None:
    row = conn.execute(
        sa.select(*VERSION_COLUMNS)
        .join(bots, bots.c.id == versions.c.bot_id)
        .where(versions.c.id == version_id)
    ).first()
    return None if row is None else version_from_row(row)


def version_by_number(conn: Connection, bot_id: int, number: int) -> Version | None:
    vid = conn.execute(
        sa.select(versions.c.id).where(versions.c.bot_id == bot_id, versions.c.number == number)
    ).scalar()
    return None if vid is None else version(conn, vid)


def versions_in_state(conn: Connection, state: VersionState) -> list[Version]:
    rows = conn.execute(
        sa.select(*VERSION_COLUMNS)
        .join(bots, bots.c.id == versions.c.bot_id)
        .where(versions.c.state == state)
        .order_by(versions.c.id)
    )
    return [version_from_row(r) for r in rows]


def finish_validation(
    conn: Connection,
    version_id: int,
    report: dict[str, Any],
    passed: bool,
    variants: Sequence[str],
) -> bool:
    """Store a validation report; a passing version becomes active and retires its predecessor.

    The new version starts at its bot's last active mu in each variant with a fresh sigma.
    Conditional on the version still validating: a disabled version stays disabled.
    """
    new_state = VersionState.ACTIVE if passed else VersionState.FAILED
    done = conn.execute(
        versions.update()
        .where(versions.c.id == version_id, versions.c.state == VersionState.VALIDATING)
        .values(
            state=new_state,
            validation=json.dumps(report, sort_keys=True),
            activated_at=now_iso() if passed else None,
        )
    ).rowcount
    if not done or not passed:
        return bool(done)
    bot_id = conn.execute(
        sa.select(versions.c.bot_id).where(versions.c.id == version_id)
    ).scalar_one()
    previous = (
        conn.execute(
            sa.select(versions.c.id).where(
                versions.c.bot_id == bot_id,
                versions.c.id != version_id,
                versions.c.state == VersionState.ACTIVE,
            )
        )
        .scalars()
        .all()
    )
    inherited: dict[str, float] = {}
    if previous:
        for variant, mu in conn.execute(
            sa.select(ratings.c.variant, ratings.c.mu).where(ratings.c.version_id == max(previous))
        ):
            inherited[variant] = mu
        conn.execute(
            versions.update().where(versions.c.id.in_(previous)).values(state=VersionState.RETIRED)
        )
    for variant in variants:
        ensure_rating(conn, version_id, variant, mu=inherited.get(variant, MU0))
    return True


def set_version_state(conn: Connection, version_id: int, state: VersionState) -> bool:
    return (
        conn.execute(
            versions.update().where(versions.c.id == version_id).values(state=state)
        ).rowcount
        == 1
    )


def set_bot_disabled(conn: Connection, bot_id: int, disabled: bool, by: str = "admin") -> bool:
    """Disable a bot (`by` "admin", or "owner": retired): it leaves matchmaking (its active
    version, and any still validating, is disabled, or retired when its owner retired it) and
    keeps its games. Enabling it again puts back its newest version that had passed validation
    as active, and any version stopped while it was validating back in the validation queue."""
    done = conn.execute(
        bots.update()
        .where(bots.c.id == bot_id)
        .values(disabled=disabled, disabled_by=by if disabled else None)
    ).rowcount
    if disabled:
        conn.execute(
            versions.update()
            .where(
                versions.c.bot_id == bot_id,
                versions.c.state.in_([VersionState.ACTIVE, VersionState.VALIDATING]),
            )
            .values(state=VersionState.RETIRED if by == "owner" else VersionState.DISABLED)
        )
        return done == 1
    mine = versions.c.bot_id == bot_id
    stopped = versions.c.state.in_([VersionState.DISABLED, VersionState.RETIRED])
    newest = conn.execute(
        sa.select(sa.func.max(versions.c.id)).where(mine, versions.c.activated_at.is_not(None))
    ).scalar()
    if newest is not None:
        # the newest ever activated: the one that was active when the bot was stopped (the
        # versions a newer one replaced are older)
        conn.execute(
            versions.update()
            .where(versions.c.id == newest, stopped)
            .values(state=VersionState.ACTIVE)
        )
    conn.execute(
        versions.update()
        .where(mine, stopped, versions.c.validation.is_(None))
        .values(state=VersionState.VALIDATING)
    )
    return done == 1


def submissions_since(conn: Connection, owner_id: int, since: str) -> int:
    return int(
        conn.execute(
            sa.select(sa.func.count())
            .select_from(versions.join(bots, bots.c.id == versions.c.bot_id))
            .where(bots.c.owner_id == owner_id, versions.c.created_at >= since)
        ).scalar_one()
    )
