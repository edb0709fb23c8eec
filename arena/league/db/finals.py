"""Finals: a season's best N versions of a variant play a knockout or a round robin.

The policy, and why:

- The finalists are fixed when the final starts: the season's top N by rating (a closed
  season's kept leaderboard, an open season's live one), as version ids, best seed first. A
  final plays those versions whatever happens to their bots meanwhile.
- Submissions are frozen for the finalists' bots while the final runs: a new version of a
  finalist's bot is refused (409, naming the final) until the final ends or an admin stops it,
  so nobody can swap a bot out under a bracket (other bots submit as usual). The finals are
  meant for the time between seasons, when the ladder plays no rated games
  (arena/league/db/seasons.py), but may run beside an open season's ladder.
- Final games are ordinary game rows (kind `final`, never rated) queued at a higher priority
  than the ladder's, so the same executors claim them first: the server's referee slots, or
  with `--no-local-games` the workers, whose queue executor defers a job for any queued game
  without one. They are recorded by the ledger's conditional update like every other game
  (exactly once; a voided attempt is replayed; a server killed mid-game requeues it).
- Nothing of a final is held in memory: its state is derived from its recorded games every
  time (`state`), with the pure bracket logic of arena/tournaments/knockout.py. `advance`,
  which the server runs every second and after a start, queues whatever games the state wants
  that no game row holds yet (`schedule_key` `final/<id>/<game>` is unique, so a second
  `advance` racing the first inserts nothing twice), and marks the final finished when it has
  a champion. So a crash anywhere resumes where the recorded games say.
- A knockout: matches of K game pairs (both seats, one opening per pair), then tie-break
  pairs (`extra_pairs`, one at a time), then the higher seed. A round robin: every pair of
  finalists plays K game pairs; the champion has the most points, ties to the higher seed.
  A game the platform fails for good (every attempt voided) is queued again under a new key
  (`...#2`): a final's game always ends with a result.
- A finalist whose bot an admin disables mid-final (cheating, a bot that abuses the platform)
  is disqualified (`disqualify`, in the disabling transaction): it forfeits every game of the
  final not finished by then. Its queued and running games are failed at once (a late result
  of one finds the row no longer running and is dropped as stale), the final's `forfeits`
  keeps it for good (enabling the bot again does not bring back games the bracket has moved
  past), and the state counts its missing games as lost: in a knockout it loses the match it
  is in, whatever the points so far (a match its games had decided stands), in a round robin
  each of its unplayed games is a win of its opponent. Its finished games stand. A finalist
  its owner retires plays on: the final is pinned to the versions of its start, retiring only
  takes the bot off the ladder, and a withdrawal would hand the owner a way to dodge a
  bracket. A finalist that was already disabled when the final starts is in it, and forfeits
  from the start.

Every function takes a Connection inside the caller's transaction (arena/league/db/database.py).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from arena.league.db import ledger, seasons
from arena.league.db.schema import (
    FinalState,
    GameKind,
    GameState,
    bots,
    finals,
    games,
    versions,
)
from arena.league.errors import LeagueError
from arena.league.settings import LeagueSettings
from arena.referee.outcome import now_iso
from arena.tournaments.knockout import (
    MAX_MATCH_PAIRS,
    Bracket,
    BracketError,
    GameKey,
    Rules,
    bracket,
)
from arena.tournaments.schedule import derive_seed, random_opening

FORMATS = ("knockout", "round-robin")
#: final games are claimed before the ladder's (the queue's order: priority, then id)
PRIORITY = 100
#: the most finalists: a bracket of 64, or a round robin of 64 * 63 / 2 pairings
MAX_TOP = 64


@dataclass(frozen=True)
class Final:
    id: int
    season_id: int
    variant: str
    format: str
    pairs: int
    extra_pairs: int
    entrants: tuple[int, ...]  # version ids, best seed first
    state: str
    created_at: str
    finished_at: str | None
    champion: int | None
    #: entrant index -> why it forfeits the rest of the final (`disqualify`)
    forfeits: Mapping[int, str] = dataclasses.field(default_factory=dict)

    @property
    def rules(self) -> Rules:
        return Rules(self.pairs, self.extra_pairs)

    def key_prefix(self) -> str:
        return f"final/{self.id}/"


def _final(r: Any) -> Final:
    return Final(
        r.id,
        r.season_id,
        r.variant,
        r.format,
        r.pairs,
        r.extra_pairs,
        tuple(json.loads(r.entrants)),
        r.state,
        r.created_at,
        r.finished_at,
        r.champion,
        {int(k): str(v) for k, v in json.loads(r.forfeits or "{}").items()},
    )


def get(conn: Connection, final_id: int) -> Final | None:
    r = conn.execute(sa.select(finals).where(finals.c.id == final_id)).first()
    return None if r is None else _final(r)


def listing(conn: Connection, season_id: int | None = None) -> list[Final]:
    """Finals, newest first (of one season, given its id)."""
    q = sa.select(finals).order_by(finals.c.id.desc())
    if season_id is not None:
        q = q.where(finals.c.season_id == season_id)
    return [_final(r) for r in conn.execute(q)]


def running(conn: Connection) -> list[Final]:
    q = sa.select(finals).where(finals.c.state == FinalState.RUNNING).order_by(finals.c.id)
    return [_final(r) for r in conn.execute(q)]


def start(
    conn: Connection,
    settings: LeagueSettings,
    *,
    season: str,
    variant: str,
    top: int,
    fmt: str,
    pairs: int,
    extra_pairs: int = 1,
) -> Final:
    """Start a final among the season's best `top` in `variant` and queue its first games."""
    found = seasons.by_name(conn, season)
    if found is None:
        raise LeagueError(f"no season {season!r}", status=404, field="season")
    if fmt not in FORMATS:
        raise LeagueError(
            f"format: expected one of {', '.join(FORMATS)}, got {fmt!r}", status=422, field="format"
        )
    if not 2 <= top <= MAX_TOP:
        raise LeagueError(
            f"top: must be between 2 and {MAX_TOP}, got {top}", status=422, field="top"
        )
    if not 1 <= pairs <= MAX_MATCH_PAIRS // 2:
        raise LeagueError(
            f"pairs: must be between 1 and {MAX_MATCH_PAIRS // 2}, got {pairs}",
            status=422,
            field="pairs",
        )
    try:
        rules = Rules(pairs, extra_pairs)
    except BracketError as e:
        raise LeagueError(str(e), status=422, field="pairs") from None
    for f in running(conn):
        if f.season_id == found.id and f.variant == variant:
            raise LeagueError(
                f"final {f.id} of season {season!r} in {variant} is running", status=409
            )
    entrants = seasons.ranking(conn, found, variant, top)
    if len(entrants) < 2:
        raise LeagueError(
            f"season {season!r} has {len(entrants)} ranked version(s) in {variant}: a final "
            "needs two",
            status=409,
        )
    fid = conn.execute(
        finals.insert().values(
            season_id=found.id,
            variant=variant,
            format=fmt,
            pairs=rules.pairs,
            extra_pairs=rules.extra_pairs,
            entrants=json.dumps(entrants),
            state=FinalState.RUNNING,
            created_at=now_iso(),
        )
    ).inserted_primary_key[0]
    final = get(conn, int(fid))
    assert final is not None
    for bot_id in _disabled_bots(conn, final.entrants):  # disabled already: forfeits throughout
        disqualify(conn, bot_id)
    final = get(conn, final.id)
    assert final is not None
    advance_one(conn, settings, final)
    return final


def _disabled_bots(conn: Connection, version_ids: tuple[int, ...]) -> list[int]:
    return list(
        conn.execute(
            sa.select(bots.c.id)
            .join(versions, versions.c.bot_id == bots.c.id)
            .where(
                versions.c.id.in_(list(version_ids)),
                bots.c.disabled.is_(True),
                bots.c.disabled_by != "owner",
            )
        ).scalars()
    )


def disqualify(conn: Connection, bot_id: int) -> list[int]:
    """An admin disabled bot `bot_id`: each running final it has a finalist in records the
    forfeit and fails that finalist's queued and running games there (see the module's
    docstring). The finals it was disqualified from."""
    name = conn.execute(sa.select(bots.c.name).where(bots.c.id == bot_id)).scalar()
    why = f"{name} was disabled by an admin"
    mine = set(conn.execute(sa.select(versions.c.id).where(versions.c.bot_id == bot_id)).scalars())
    out = []
    for f in running(conn):
        entrants = [i for i, v in enumerate(f.entrants) if v in mine]
        if not entrants:
            continue
        forfeits = {**f.forfeits, **{i: why for i in entrants if i not in f.forfeits}}
        conn.execute(
            finals.update()
            .where(finals.c.id == f.id)
            .values(forfeits=json.dumps({str(k): v for k, v in sorted(forfeits.items())}))
        )
        seated = [f.entrants[i] for i in entrants]
        conn.execute(
            games.update()
            .where(
                games.c.schedule_key.like(f"{f.key_prefix()}%"),
                games.c.state.in_([GameState.QUEUED, GameState.RUNNING]),
                sa.or_(games.c.version0.in_(seated), games.c.version1.in_(seated)),
            )
            .values(state=GameState.FAILED, detail=f"forfeited: {why}", finished_at=now_iso())
        )
        out.append(f.id)
    return out


def stop(conn: Connection, final_id: int) -> Final:
    """An admin ends a running final: its queued games are failed, its submissions thaw."""
    final = get(conn, final_id)
    if final is None:
        raise LeagueError(f"no final {final_id}", status=404)
    if final.state != FinalState.RUNNING:
        raise LeagueError(f"final {final_id} is {final.state}, not running", status=409)
    conn.execute(
        games.update()
        .where(
            games.c.schedule_key.like(f"{final.key_prefix()}%"),
            games.c.state == GameState.QUEUED,
        )
        .values(state=GameState.FAILED, detail="the final was stopped", finished_at=now_iso())
    )
    conn.execute(
        finals.update()
        .where(finals.c.id == final_id)
        .values(state=FinalState.STOPPED, finished_at=now_iso())
    )
    return get(conn, final_id)  # type: ignore[return-value]


def check_unfrozen(conn: Connection, bot_name: str) -> None:
    """A submission of `bot_name` while one of its versions is in a running final: 409."""
    for f in running(conn):
        names = conn.execute(
            sa.select(bots.c.name)
            .join(versions, versions.c.bot_id == bots.c.id)
            .where(versions.c.id.in_(list(f.entrants)))
        ).scalars()
        if bot_name in set(names):
            raise LeagueError(
                f"bot {bot_name!r} is a finalist of final {f.id} ({f.variant}), which is running: "
                "its submissions are frozen until the final ends",
                status=409,
            )


# --- the state, from the recorded games -------------------------------------------------------


@dataclass(frozen=True)
class Planned:
    """A game the final wants: its key (without the final's prefix) and its seats, versions."""

    key: str
    pair_key: str  # both seat orders of a pair share it: their opening
    seats: tuple[int, int]


@dataclass
class State:
    """A final as its games leave it. `results`: base key -> winning entrant (None: draw)."""

    final: Final
    results: dict[str, int | None]
    #: base key -> (state, key) of its latest game row (failed rows count how many)
    rows: dict[str, list[tuple[str, str]]]
    wanted: list[Planned]
    champion: int | None  # an entrant index
    bracket: Bracket | None = None
    table: list[dict[str, Any]] | None = None


def _rr_key(i: int, j: int, pair: int, seat_order: int) -> str:
    return f"rr-{i}-{j}-p{pair}-{'ab'[seat_order]}"


def _ko_key(k: GameKey) -> str:
    return f"k{k.round}-m{k.match}-p{k.pair}-{'ab'[k.seat_order]}"


def _game_rows(conn: Connection, final: Final) -> list[Any]:
    return conn.execute(
        sa.select(
            games.c.id,
            games.c.schedule_key,
            games.c.state,
            games.c.winner,
            games.c.version0,
            games.c.version1,
        )
        .where(games.c.schedule_key.like(f"{final.key_prefix()}%"))
        .order_by(games.c.id)
    ).all()


def state(conn: Connection, final: Final) -> State:
    """The final's state from its games: results, wanted games, champion."""
    index = {v: i for i, v in enumerate(final.entrants)}
    results: dict[str, int | None] = {}
    rows: dict[str, list[tuple[str, str]]] = {}
    for r in _game_rows(conn, final):
        key = r.schedule_key[len(final.key_prefix()) :]
        base = key.split("#")[0]
        rows.setdefault(base, []).append((r.state, key))
        if r.state == GameState.FINISHED:
            seated = (r.version0, r.version1)
            results[base] = None if r.winner is None else index.get(seated[r.winner])
    if final.format == "knockout":
        ko_results = {
            k: results[_ko_key(k)] for k in _all_ko_keys(final, results) if _ko_key(k) in results
        }
        b = bracket(len(final.entrants), final.rules, ko_results, frozenset(final.forfeits))
        wanted = [
            Planned(
                _ko_key(g.key),
                f"k{g.key.round}-m{g.key.match}-p{g.key.pair}",
                (final.entrants[g.seats[0]], final.entrants[g.seats[1]]),
            )
            for g in b.wanted
        ]
        return State(final, results, rows, wanted, b.champion, bracket=b)
    table, wanted, champion = _round_robin(final, results)
    return State(final, results, rows, wanted, champion, table=table)


def _all_ko_keys(final: Final, results: Mapping[str, int | None]) -> list[GameKey]:
    keys = []
    for base in results:
        if base.startswith("k"):
            r, m, p, s = base[1:].split("-")
            keys.append(GameKey(int(r), int(m[1:]), int(p[1:]), "ab".index(s)))
    return keys


def _round_robin(
    final: Final, results: Mapping[str, int | None]
) -> tuple[list[dict[str, Any]], list[Planned], int | None]:
    n = len(final.entrants)
    points = [0.0] * n
    played = [0] * n
    wanted = []
    for i, j in itertools.combinations(range(n), 2):
        for pair in range(final.pairs):
            for seat_order, (a, b) in enumerate(((i, j), (j, i))):
                key = _rr_key(i, j, pair, seat_order)
                if key not in results and {a, b} & final.forfeits.keys():
                    # a disqualified finalist's unplayed game: its opponent's win (both
                    # disqualified: nobody's), not played, not counted as a game played
                    for side, other in ((a, b), (b, a)):
                        if side not in final.forfeits and other in final.forfeits:
                            points[side] += 1.0
                    continue
                if key not in results:
                    wanted.append(
                        Planned(
                            key,
                            f"rr-{i}-{j}-p{pair}",
                            (final.entrants[a], final.entrants[b]),
                        )
                    )
                    continue
                w = results[key]
                played[a] += 1
                played[b] += 1
                if w is None:
                    points[a] += 0.5
                    points[b] += 0.5
                elif w in (a, b):
                    points[w] += 1.0
    # a disqualified finalist is placed after every other, whatever its points: never champion
    order = sorted(range(n), key=lambda e: (e in final.forfeits, -points[e], e))
    table = [
        {
            "place": k + 1,
            "entrant": e,
            "points": points[e],
            "games": played[e],
            "forfeited": e in final.forfeits,
        }
        for k, e in enumerate(order)
    ]
    return table, wanted, (order[0] if not wanted else None)


def advance_one(conn: Connection, settings: LeagueSettings, final: Final) -> int:
    """Queue the games `state` wants that no row holds yet, and replace a failed one; finish
    the final when it has a champion. How many games were queued."""
    st = state(conn, final)
    if st.champion is not None:
        conn.execute(
            finals.update()
            .where(finals.c.id == final.id, finals.c.state == FinalState.RUNNING)
            .values(
                state=FinalState.FINISHED,
                finished_at=now_iso(),
                champion=final.entrants[st.champion],
            )
        )
        return 0
    entry = settings.game(final.variant)
    queued = 0
    for p in st.wanted:
        tries = st.rows.get(p.key, [])
        if any(s in (GameState.QUEUED, GameState.RUNNING) for s, _ in tries):
            continue
        key = p.key if not tries else f"{p.key}#{len(tries) + 1}"
        pair_seed = derive_seed("final", final.id, p.pair_key)
        seed = derive_seed("final", final.id, p.key) & 0x7FFFFFFF
        opening = random_opening(entry, pair_seed, 0, 0, settings.opening_turns)
        ledger.create_game(
            conn,
            ledger.NewGame(
                kind=GameKind.FINAL,
                variant=entry.label,
                game_name=entry.name,
                options=dict(entry.options),
                seed=seed,
                opening=opening,
                time_control=settings.time_control.to_dict(),
                version0=p.seats[0],
                version1=p.seats[1],
                priority=PRIORITY,
                schedule_key=final.key_prefix() + key,
                season_id=final.season_id,
            ),
        )
        queued += 1
    return queued


def advance(conn: Connection, settings: LeagueSettings) -> int:
    """`advance_one` for every running final; how many games were queued."""
    return sum(advance_one(conn, settings, f) for f in running(conn))


# --- for the pages and the API ---------------------------------------------------------------


def _names(conn: Connection, version_ids: list[int]) -> dict[int, dict[str, Any]]:
    rows = conn.execute(
        sa.select(versions.c.id, versions.c.number, bots.c.name)
        .join(bots, bots.c.id == versions.c.bot_id)
        .where(versions.c.id.in_(version_ids))
    )
    return {r.id: {"bot": r.name, "version": r.number, "version_id": r.id} for r in rows}


def summary(conn: Connection, final: Final, season_name: str) -> dict[str, Any]:
    names = _names(conn, list(final.entrants))
    entrants = [{"seed": i + 1, **names[v]} for i, v in enumerate(final.entrants)]
    by_version = {e["version_id"]: e for e in entrants}
    return {
        "id": final.id,
        "season": season_name,
        "variant": final.variant,
        "format": final.format,
        "pairs": final.pairs,
        "extra_pairs": final.extra_pairs,
        "state": final.state,
        "created_at": final.created_at,
        "finished_at": final.finished_at,
        "entrants": entrants,
        "champion": by_version.get(final.champion) if final.champion is not None else None,
        "forfeits": [{**entrants[i], "why": why} for i, why in sorted(final.forfeits.items())],
    }


def detail(conn: Connection, final: Final, season_name: str) -> dict[str, Any]:
    """A final with its bracket (or table) and every game, for its page and the API."""
    out = summary(conn, final, season_name)
    st = state(conn, final)
    entrants = out["entrants"]

    def who(i: int | None) -> dict[str, Any] | None:
        return None if i is None else entrants[i]

    game_ids: dict[str, int] = {}
    listed = []
    for r in _game_rows(conn, final):
        key = r.schedule_key[len(final.key_prefix()) :]
        game_ids.setdefault(key.split("#")[0], r.id)
        if r.state == GameState.FINISHED:
            game_ids[key.split("#")[0]] = r.id
        listed.append({"id": r.id, "key": key, "state": r.state, "winner": r.winner})
    out["games"] = listed
    if st.bracket is not None:
        out["rounds"] = [
            [
                {
                    "round": m.round,
                    "match": m.index,
                    "sides": [who(m.sides[0]), who(m.sides[1])],
                    "bye": m.bye,
                    "points": list(m.points),
                    "pairs": m.pairs_played,
                    "winner": who(m.winner),
                    "decided_by": m.decided_by,
                    "games": [
                        game_ids[k]
                        for k in sorted(game_ids)
                        if k.startswith(f"k{m.round}-m{m.index}-")
                    ],
                }
                for m in rnd
            ]
            for rnd in st.bracket.rounds
        ]
    if st.table is not None:
        out["standings"] = [
            {
                "place": row["place"],
                "points": row["points"],
                "games": row["games"],
                "forfeited": row["forfeited"],
                **entrants[row["entrant"]],
            }
            for row in st.table
        ]
    out["games_left"] = len(st.wanted)
    return out
