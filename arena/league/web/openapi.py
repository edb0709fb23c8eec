"""The OpenAPI 3.1 description of the JSON API, served at /api/v1/openapi.json.

Written as data next to the endpoints so a change to one shows in review beside the other; the
tests validate every answer the server gives against it (schemas are JSON Schema 2020-12, as
OpenAPI 3.1 has them), so the description cannot drift from the server unnoticed.
"""

from __future__ import annotations

from typing import Any

from arena.league.db.schema import (
    OUTCOMES,
    SHOWN_VERSION_STATES,
    VERDICT_WORDS,
    GameState,
    TestState,
    VersionState,
)


def _nullable(t: str) -> dict[str, Any]:
    return {"type": [t, "null"]}


def _obj(props: dict[str, Any], required: list[str] | None = None, **extra: Any) -> dict:
    return {
        "type": "object",
        "properties": props,
        "required": list(props) if required is None else required,
        **extra,
    }


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _page(item: str, **extra: Any) -> dict[str, Any]:
    return _obj(
        {
            **extra,
            "items": {"type": "array", "items": _ref(item)},
            "limit": {"type": "integer", "minimum": 1, "maximum": 200},
            "offset": {"type": "integer", "minimum": 0},
            "next": _nullable("integer"),
        }
    )


_STR, _INT, _NUM, _BOOL = (
    {"type": "string"},
    {"type": "integer"},
    {"type": "number"},
    {"type": "boolean"},
)

SCHEMAS: dict[str, Any] = {
    "Error": _obj(
        {
            "error": _obj(
                {"status": _INT, "message": _STR, "field": _nullable("string")},
            )
        }
    ),
    "Status": _obj(
        {
            "name": _STR,
            "variants": {
                "type": "array",
                "items": _obj({"label": _STR, "game": _STR, "options": {"type": "object"}}),
            },
            "time_control": {"type": "object"},
            "games": {"type": "object", "additionalProperties": _INT},
        }
    ),
    "Me": _obj({"name": _STR, "admin": _BOOL}),
    "LeaderboardRow": _obj(
        {
            "rank": _INT,
            "bot": _STR,
            "owner": _STR,
            "version": _INT,
            "version_id": _INT,
            "state": {"enum": [str(s) for s in VersionState]},
            "rating": _NUM,
            "mu": _NUM,
            "sigma": _NUM,
            "games": _INT,
            "wins": _INT,
            "draws": _INT,
            "losses": _INT,
            "forfeits": _INT,
            "elo": _nullable("number"),
            "elo_ci95": _nullable("number"),
            "last_game_at": _nullable("string"),
            "rank_low": {
                "type": "integer",
                "minimum": 1,
                "description": "95% interval of the true place (docs/league.md, Matchmaking)",
            },
            "rank_high": {"type": "integer", "minimum": 1},
        }
    ),
    "Bot": _obj(
        {
            "name": _STR,
            "owner": _STR,
            "disabled": _BOOL,
            "created_at": _STR,
            "latest_version": _nullable("integer"),
        }
    ),
    "Version": _obj(
        {
            "id": _INT,
            "bot": _STR,
            "number": _INT,
            "state": {"enum": list(SHOWN_VERSION_STATES)},
            "created_at": _STR,
            "activated_at": _nullable("string"),
            "archive_sha256": _STR,
            "manifest": {"type": "object"},
            "validation": {
                "oneOf": [
                    {"type": "null"},
                    _obj(
                        {"passed": _BOOL, "stage": _nullable("string")},
                        required=["passed"],
                    ),
                ]
            },
        }
    ),
    "Seat": _obj({"bot": _STR, "version": _INT, "version_id": _INT}),
    "Game": _obj(
        {
            "id": _INT,
            "kind": _STR,
            "variant": _STR,
            "game": _STR,
            "state": {"enum": [str(s) for s in GameState]},
            "attempt": _INT,
            "seats": {"type": "array", "items": _ref("Seat"), "minItems": 2, "maxItems": 2},
            "created_at": _STR,
            "claimed_at": _nullable("string"),
            "finished_at": _nullable("string"),
            "winner": {"type": ["integer", "null"], "enum": [0, 1, None]},
            "result": _nullable("string"),
            "reason": _nullable("string"),
            "detail": _nullable("string"),
            "forfeit": _nullable("boolean"),
            "loser_seat": _nullable("integer"),
            "scores": {"type": "array", "items": _nullable("integer")},
            "turns": _nullable("integer"),
            "duration": _nullable("number"),
            "rated": _nullable("boolean"),
        }
    ),
    "Void": _obj({"attempt": _INT, "kind": _STR, "reason": _STR, "at": _STR}),
    "Record": _obj(
        {"format": {"const": "arena-record/1"}, "result": {"type": "object"}},
        required=["format", "result"],
    ),
    "Logs": _obj(
        {
            "game": _INT,
            "state": _STR,
            "seats": {
                "type": "array",
                "items": _obj(
                    {
                        "seat": _INT,
                        "bot": _STR,
                        "version": _INT,
                        "stderr": _STR,
                        "logs": {"type": "array", "items": {"type": "object"}},
                        # the bot's debug marks: the record's `marks` entries of this seat
                        "marks": {"type": "array", "items": {"type": "object"}},
                    }
                ),
            },
        }
    ),
    "Submitted": _obj(
        {
            "id": _INT,
            "bot": _STR,
            "version": _INT,
            "state": {"enum": list(SHOWN_VERSION_STATES)},
            "status": {"enum": list(SHOWN_VERSION_STATES)},
            "url": _STR,
        }
    ),
    "Ok": _obj({"ok": {"const": True}}),
}
#: a candidate test of a new version against its bot's previous one (docs/league.md,
#: "Candidate verdicts"), as it forms: `verdict` in words, `summary` in one line
SCHEMAS["Verdict"] = _obj(
    {
        "variant": _STR,
        "bot": _STR,
        "version": _INT,
        "version_id": _INT,
        "against": _INT,
        "state": {"enum": [str(s) for s in TestState]},
        "verdict": {"enum": list(VERDICT_WORDS.values())},
        "llr": _NUM,
        "lower": _NUM,
        "upper": _NUM,
        "elo0": _NUM,
        "elo1": _NUM,
        "alpha": _NUM,
        "beta": _NUM,
        "model": {"enum": ["logistic", "normalized"]},
        "max_pairs": _INT,
        "pairs": _INT,
        "games": _INT,
        "pentanomial": {"type": "array", "items": _INT, "minItems": 5, "maxItems": 5},
        "wins": _INT,
        "draws": _INT,
        "losses": _INT,
        "elo": _nullable("number"),
        "elo_ci95": _nullable("number"),
        "los": _nullable("number"),
        "elo_text": _STR,
        "note": _nullable("string"),
        "created_at": _STR,
        "decided_at": _nullable("string"),
        "summary": _STR,
    }
)
SCHEMAS["BotDetail"] = {
    "allOf": [
        _ref("Bot"),
        _obj(
            {
                "versions": {"type": "array", "items": _ref("Version")},
                "verdicts": {"type": "array", "items": _ref("Verdict")},
            }
        ),
    ]
}
SCHEMAS["VersionDetail"] = {
    "allOf": [
        _ref("Version"),
        _obj(
            {
                "validation": {"type": ["object", "null"]},
                "ratings": {"type": "array", "items": {"type": "object"}},
                "verdicts": {"type": "array", "items": _ref("Verdict")},
            }
        ),
    ]
}
SCHEMAS["GameDetail"] = {
    "allOf": [_ref("Game"), _obj({"voids": {"type": "array", "items": _ref("Void")}})]
}
SCHEMAS["LeaderboardPage"] = _page("LeaderboardRow", variant=_STR)
SCHEMAS["BotPage"] = _page("Bot")
SCHEMAS["GamePage"] = _page("Game")
SCHEMAS["QueuePage"] = _page("Game", counts={"type": "object", "additionalProperties": _INT})
SCHEMAS["Worker"] = _obj(
    {
        "name": _STR,
        "host": _STR,
        "pid": _INT,
        "state": {"enum": ["running", "offline", "lost", "stopped"]},
        "concurrency": _INT,
        "playing": {
            "type": "array",
            "items": _obj({"game": _INT, "attempt": _INT, "variant": _STR}),
        },
        "load": _NUM,
        "heartbeat_age": _NUM,
        "started_at": _nullable("string"),
        "played": _INT,
        "voided": _INT,
        "stale": _INT,
        "stalls": _INT,
        "recent_games": _INT,
        "recent_stalls": _INT,
        "stall_rate": _NUM,
        "degraded": {"type": "boolean"},
        "slots": _INT,
        "last_failure": _nullable("string"),
        "last_failure_at": _nullable("string"),
    }
)
SCHEMAS["Workers"] = _obj(
    {
        "stalled_after": _NUM,
        "jobs": {"type": "object", "additionalProperties": _INT},
        "items": {"type": "array", "items": _ref("Worker")},
    }
)


def _param(name: str, where: str, schema: dict[str, Any], doc: str, required=False) -> dict:
    return {
        "name": name,
        "in": where,
        "required": required or where == "path",
        "schema": schema,
        "description": doc,
    }


_PAGE_PARAMS = [
    _param("limit", "query", {"type": "integer", "minimum": 1, "maximum": 200}, "page size"),
    _param("offset", "query", {"type": "integer", "minimum": 0}, "items to skip"),
]
_ERR = {"description": "error", "content": {"application/json": {"schema": _ref("Error")}}}
#: what any endpoint answers when the league itself failed (a bug, a corrupt stored archive):
#: the generic error body; the traceback stays in the server's log
_ERR500 = {
    "description": "internal error (see the server log)",
    "content": {"application/json": {"schema": _ref("Error")}},
}


def _err(description: str) -> dict[str, Any]:
    return {**_ERR, "description": description}


def _op(summary: str, schema: str, *, params=(), auth=False, status="200", errors=()) -> dict:
    """An operation answering `status` with `schema`; `errors` are status codes, or (code,
    description) pairs for a client to know when it comes; 401 with `auth`, 422 (a malformed
    parameter) and 500 always."""
    responses: dict[str, Any] = {
        status: {
            "description": summary,
            "content": {"application/json": {"schema": _ref(schema)}},
        }
    }
    for code in (*errors, *(("401",) if auth else ()), "422"):
        if isinstance(code, tuple):
            responses[code[0]] = _err(code[1])
        elif code not in responses:
            responses[code] = _ERR
    responses["500"] = _ERR500
    op: dict[str, Any] = {"summary": summary, "parameters": list(params), "responses": responses}
    if auth:
        op["security"] = [{"bearer": []}]
    return op


_NAME = _param("name", "path", _STR, "bot name")
_GID = _param("game_id", "path", _INT, "game id")

PATHS: dict[str, Any] = {
    "/api/v1": {"get": _op("the league: variants, clock, games by state", "Status")},
    "/api/v1/me": {"get": _op("whose token this is", "Me", auth=True)},
    "/api/v1/leaderboard/{variant}": {
        "get": _op(
            "active versions by conservative rating (mu - 3 sigma), each with the 95% interval"
            " of its true place (rank_low..rank_high)",
            "LeaderboardPage",
            params=[
                _param("variant", "path", _STR, "a variant label of league.toml"),
                _param("all", "query", _BOOL, "include retired and disabled versions"),
                *_PAGE_PARAMS,
            ],
            errors=(("404", "field variant: no such variant in this league"),),
        )
    },
    "/api/v1/bots": {
        "get": _op("bots", "BotPage", params=_PAGE_PARAMS),
        "post": {
            **_op(
                "submit a bot directory (tar.gz, tar or zip with bot.toml), a new version",
                "Submitted",
                auth=True,
                status="202",
                errors=(
                    ("400", "field archive: not a tar.gz, tar or zip archive, or a corrupt one"),
                    (
                        "403",
                        "field name: the manifest's name is another user's bot; field null: "
                        "the bot is retired or disabled",
                    ),
                    (
                        "413",
                        "field archive: larger than the league's max_archive_mb, too many "
                        "members, unpacks too large, a compression bomb",
                    ),
                    (
                        "415",
                        "field archive: a Content-Type other than application/gzip, "
                        "application/x-gzip, application/x-tar, application/x-compressed-tar, "
                        "application/zip, application/octet-stream or multipart/form-data",
                    ),
                    (
                        "422",
                        "field archive: an empty body, a form without the file field "
                        "'archive', an archive rule; field bot.toml: the manifest does not "
                        "load, reaches outside the bot, or has a bad name",
                    ),
                    ("429", "the account's hourly submissions are used up"),
                    (
                        "408",
                        "the body paused 10 s or took 120 s (the connection is closed after it)",
                    ),
                ),
            ),
            "requestBody": {
                "required": True,
                "content": {
                    "application/gzip": {"schema": {"type": "string", "format": "binary"}},
                    "application/zip": {"schema": {"type": "string", "format": "binary"}},
                    "multipart/form-data": {
                        "schema": _obj({"archive": {"type": "string", "format": "binary"}})
                    },
                },
            },
        },
    },
    "/api/v1/bots/{name}": {
        "get": _op(
            "a bot, its versions and its last candidate verdicts (newest version first)",
            "BotDetail",
            params=[_NAME],
            errors=("404",),
        )
    },
    "/api/v1/bots/{name}/versions/{number}": {
        "get": {
            **_op(
                "a version: manifest (the limits that apply), validation report, ratings, and"
                " its candidate verdicts against the previous version as they form (one per"
                " variant); with its owner's or an admin's token the report adds the bot's"
                " stderr_tail and build_output",
                "VersionDetail",
                params=[_NAME, _param("number", "path", _INT, "version number")],
                errors=("401", "404"),
            ),
            "security": [{}, {"bearer": []}],
        }
    },
    "/api/v1/bots/{name}/disable": {
        "post": _op(
            "admin: take a bot off the ladder (enable=true: back on)",
            "Ok",
            params=[_NAME, _param("enable", "query", _BOOL, "undo")],
            auth=True,
            errors=("403", "404"),
        )
    },
    "/api/v1/users/{name}/disable": {
        "post": _op(
            "admin: refuse an account's token (enable=true: accept it again)",
            "Ok",
            params=[_param("name", "path", _STR, "user"), _param("enable", "query", _BOOL, "undo")],
            auth=True,
            errors=("403", "404"),
        )
    },
    "/api/v1/games": {
        "get": _op(
            "finished games, newest first by finish time (finished_at, then id)",
            "GamePage",
            params=[
                _param("bot", "query", _STR, "games of this bot"),
                _param("variant", "query", _STR, "games of this variant"),
                _param("result", "query", {"enum": list(OUTCOMES)}, "as the bot saw it"),
                _param(
                    "since",
                    "query",
                    {"type": "string", "format": "date-time"},
                    "finished at or after (ISO 8601: a date is midnight UTC, no offset is UTC)",
                ),
                _param("until", "query", {"type": "string", "format": "date-time"}, "before"),
                _param(
                    "reason",
                    "query",
                    {"type": "string", "pattern": "^[A-Za-z0-9_]{1,64}$"},
                    "ended by this reason code (time_forfeit, max_turns, ...)",
                ),
                *_PAGE_PARAMS,
            ],
            errors=(
                ("400", "field result: ?result= without ?bot="),
                ("404", "field bot: no such bot; field variant: no such variant"),
            ),
        )
    },
    "/api/v1/games/{game_id}": {
        "get": _op(
            "one game, with its voided attempts", "GameDetail", params=[_GID], errors=("404",)
        )
    },
    "/api/v1/games/{game_id}/record": {
        "get": _op(
            "the game's arena-record/1, the owners' stderr, logs and debug marks left out,"
            " no server paths",
            "Record",
            params=[_GID],
            errors=("404",),
        )
    },
    "/api/v1/games/{game_id}/logs": {
        "get": _op(
            "owner or admin: the stderr, logs and debug marks of the caller's bot(s) in a game",
            "Logs",
            params=[_GID],
            auth=True,
            errors=("403", "404"),
        )
    },
    "/api/v1/queue": {
        "get": _op(
            "games in flight, then queued, with counts by state", "QueuePage", params=_PAGE_PARAMS
        )
    },
    "/api/v1/workers": {
        "get": _op(
            "the workers: state, games in play, load, games played/voided/stale, host stalls"
            " (`stalls` in all; `stall_rate` = `recent_stalls` / `recent_games`, its last 50"
            " games; `degraded` at 10% or more over at least 20 of them, when it plays `slots`"
            " games at once, half its `concurrency`), last failure; the job queue's counts."
            " `(server)` is the server's own game slots",
            "Workers",
        )
    },
    "/api/v1/worker/archives/{sha}": {
        "get": {
            **_op(
                "workers (worker secret): a version's archive by its sha256",
                "Ok",
                params=[_param("sha", "path", _STR, "the archive's sha256, hex")],
                auth=True,
                errors=("404",),
            ),
            "responses": {
                "200": {
                    "description": "the archive's bytes",
                    "content": {
                        "application/octet-stream": {
                            "schema": {"type": "string", "format": "binary"}
                        }
                    },
                },
                "401": _ERR,
                "404": _ERR,
                "500": _ERR500,
            },
        }
    },
    "/workers": {
        "get": {
            "summary": "the workers as an HTML page",
            "responses": {"200": {"description": "HTML", "content": {"text/html": {}}}},
        }
    },
    "/api/v1/openapi.json": {
        "get": {
            "summary": "this description",
            "responses": {
                "200": {"description": "OpenAPI 3.1", "content": {"application/json": {}}},
                "500": _ERR500,
            },
        }
    },
}


# --- seasons and finals (arena/league/db/seasons.py, db/finals.py) ------------------------------

_SEASON = _param(
    "season",
    "query",
    _STR,
    "a season's name: its leaderboard (a closed season's as it stood at its close) or games",
)
_FINALIST = _obj({"seed": _INT, "bot": _STR, "version": _INT, "version_id": _INT})
_SIDE = {"oneOf": [{"type": "null"}, _ref("Finalist")]}
SCHEMAS.update(
    {
        "Season": _obj(
            {
                "name": _STR,
                "state": {"enum": ["open", "closed"]},
                "opened_at": _STR,
                "closed_at": _nullable("string"),
            }
        ),
        "Seasons": _obj({"items": {"type": "array", "items": _ref("Season")}}),
        "Finalist": _FINALIST,
        "Final": _obj(
            {
                "id": _INT,
                "season": _STR,
                "variant": _STR,
                "format": {"enum": ["knockout", "round-robin"]},
                "pairs": _INT,
                "extra_pairs": _INT,
                "state": {"enum": ["running", "finished", "stopped"]},
                "created_at": _STR,
                "finished_at": _nullable("string"),
                "entrants": {"type": "array", "items": _ref("Finalist")},
                "champion": _SIDE,
                # finalists disqualified mid-final (an admin disabled the bot): they forfeit
                # every game of the final not finished by then
                "forfeits": {
                    "type": "array",
                    "items": _obj({**_FINALIST["properties"], "why": _STR}),
                },
            }
        ),
        "Finals": _obj({"items": {"type": "array", "items": _ref("Final")}}),
        "FinalDetail": {
            "allOf": [_ref("Final")],
            "type": "object",
            "properties": {
                "games": {
                    "type": "array",
                    "items": _obj(
                        {"id": _INT, "key": _STR, "state": _STR, "winner": _nullable("integer")}
                    ),
                },
                "games_left": _INT,
                "rounds": {
                    "type": "array",
                    "items": {
                        "type": "array",
                        "items": _obj(
                            {
                                "round": _INT,
                                "match": _INT,
                                "sides": {"type": "array", "items": _SIDE},
                                "bye": _BOOL,
                                "points": {"type": "array", "items": _NUM},
                                "pairs": _INT,
                                "winner": _SIDE,
                                "decided_by": {"enum": ["", "bye", "points", "seed", "forfeit"]},
                                "games": {"type": "array", "items": _INT},
                            }
                        ),
                    },
                },
                "standings": {
                    "type": "array",
                    "items": _obj(
                        {
                            "place": _INT,
                            "points": _NUM,
                            "games": _INT,
                            "forfeited": _BOOL,
                            "seed": _INT,
                            "bot": _STR,
                            "version": _INT,
                            "version_id": _INT,
                        }
                    ),
                },
            },
            "required": ["games", "games_left"],
        },
    }
)
PATHS["/api/v1/leaderboard/{variant}"]["get"]["parameters"].append(_SEASON)
PATHS["/api/v1/leaderboard/{variant}"]["get"]["responses"]["404"] = _err(
    "field variant: no such variant in this league; field season: no such season"
)
PATHS["/api/v1/bots"]["post"]["responses"]["409"] = _err(
    "the bot is a finalist of a running final: its submissions are frozen until it ends"
)
PATHS["/api/v1/games"]["get"]["parameters"].append(_SEASON)
PATHS["/api/v1/games"]["get"]["responses"]["404"] = _err(
    "field bot: no such bot; field variant: no such variant; field season: no such season"
)
_ADMIN_CONFLICT = (
    "409",
    "a season is open already (open), none is open (close), or the name exists",
)
PATHS.update(
    {
        "/api/v1/seasons": {
            "get": _op("every season, newest first", "Seasons"),
            "post": {
                **_op(
                    'admin: open season `name` (JSON body {"name": ...}): fresh ratings for'
                    " every active version; no other season may be open",
                    "Season",
                    auth=True,
                    status="201",
                    errors=("403", _ADMIN_CONFLICT),
                ),
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": _obj({"name": _STR})}},
                },
            },
        },
        "/api/v1/seasons/close": {
            "post": _op(
                "admin: close the open season (its leaderboards are kept; rated games stop)",
                "Season",
                auth=True,
                errors=("403", _ADMIN_CONFLICT),
            )
        },
        "/api/v1/finals": {
            "get": _op("finals, newest first", "Finals", params=[_SEASON], errors=("404",)),
            "post": {
                **_op(
                    "admin: start a final among a season's top N of a variant (JSON body)",
                    "FinalDetail",
                    auth=True,
                    status="201",
                    errors=(
                        "403",
                        ("404", "field season: no such season; field variant: no such variant"),
                        ("409", "a final of that season and variant runs, or too few ranked"),
                    ),
                ),
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": _obj(
                                {
                                    "season": _STR,
                                    "variant": _STR,
                                    "top": _INT,
                                    "format": {"enum": ["knockout", "round-robin"]},
                                    "pairs": _INT,
                                    "extra_pairs": _INT,
                                },
                                required=["season", "variant", "top", "format"],
                            )
                        }
                    },
                },
            },
        },
        "/api/v1/finals/{final_id}": {
            "get": _op(
                "a final: its finalists, bracket (knockout) or standings (round robin), champion"
                " and games",
                "FinalDetail",
                params=[_param("final_id", "path", _INT, "final id")],
                errors=("404",),
            )
        },
        "/api/v1/finals/{final_id}/stop": {
            "post": _op(
                "admin: stop a running final (its queued games are dropped)",
                "FinalDetail",
                params=[_param("final_id", "path", _INT, "final id")],
                auth=True,
                errors=("403", "404", "409"),
            )
        },
    }
)


def openapi() -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {"title": "arena league", "version": "1", "description": "docs/league.md"},
        "paths": PATHS,
        "components": {
            "schemas": SCHEMAS,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }
