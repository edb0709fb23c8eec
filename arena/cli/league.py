"""`arena league init|serve|migrate|user|bot`: host a league on this machine; `submit`,
`leaderboard`, `games`, `download`, `logs`: the client of a league server (docs/league.md)."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from pathlib import Path
from typing import Any

from arena.errors import ArenaError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "league",
        help="host a league (init, serve, ...) or use one (submit, leaderboard, games, ...)",
        description="A league server: people submit bots, which then play rated games around "
        "the clock. See docs/league.md.",
    )
    lsub = p.add_subparsers(dest="league_command", metavar="SUBCOMMAND")
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])

    i = lsub.add_parser("init", help="create a league directory: league.toml and its database")
    i.add_argument("dir", metavar="DIR")
    i.add_argument("--name", help="the league's name (default: the directory's name)")
    i.add_argument(
        "--database", metavar="URL", help="database URL (default: SQLite in DIR/league.sqlite)"
    )
    i.set_defaults(func=cmd_init)

    s = lsub.add_parser("serve", help="serve the API, schedule and play games until stopped")
    s.add_argument("dir", metavar="DIR")
    s.add_argument("--listen", metavar="HOST:PORT", help="override league.toml's listen")
    s.add_argument(
        "--unsafe",
        action="store_true",
        help="start even if bots cannot be confined (not root, no docker)",
    )
    s.add_argument(
        "--no-local-games",
        action="store_true",
        help="play no games here: queue them as jobs for 'arena league worker's (PostgreSQL)",
    )
    s.add_argument(
        "--public-url",
        metavar="URL",
        help="the URL workers reach this server at (default: the first address it listens on)",
    )
    s.add_argument(
        "--stalled-after",
        type=_seconds,
        default=30.0,
        metavar="S",
        help="seconds without a heartbeat after which a worker is shown lost (default 30)",
    )
    s.set_defaults(func=cmd_serve)

    w = lsub.add_parser(
        "worker",
        help="play a league's queued games on this machine (any machine reaching the database)",
        description="Take game jobs from the league's PostgreSQL job queue, play them in the "
        "sandbox and record the results. See docs/league.md.",
    )
    w.add_argument("--database", required=True, metavar="URL", help="the league's database URL")
    w.add_argument(
        "--concurrency", type=_positive_int, default=1, metavar="N", help="games at once (1)"
    )
    w.add_argument(
        "--force",
        action="store_true",
        help="play a concurrency above this machine's CPUs all the same (bots waiting for a "
        "CPU may then lose on time)",
    )
    w.add_argument("--name", help="this worker's name (default: HOST-PID)")
    w.add_argument(
        "--server", metavar="URL", help="the league server (default: the URL it published)"
    )
    w.add_argument(
        "--archives",
        metavar="DIR",
        help="shared storage holding the server's archives/ (read first, hashes checked)",
    )
    w.add_argument(
        "--cache",
        default="~/.cache/arena-worker",
        metavar="DIR",
        help="where fetched bots are kept (default ~/.cache/arena-worker)",
    )
    w.add_argument(
        "--heartbeat", type=_seconds, default=5.0, metavar="S", help="seconds between beats (5)"
    )
    w.add_argument(
        "--stalled-after",
        type=_seconds,
        default=30.0,
        metavar="S",
        help="seconds of silence after which a worker's games are replayed elsewhere (30)",
    )
    w.add_argument(
        "--retry-wait",
        type=_seconds,
        default=1.0,
        metavar="S",
        help="seconds before a voided game is tried again (1)",
    )
    w.add_argument(
        "--grace",
        type=_seconds,
        default=30.0,
        metavar="S",
        help="seconds games in play may finish after SIGTERM (30)",
    )
    w.add_argument(
        "--unsafe",
        action="store_true",
        help="start even if bots cannot be confined here (not root, no docker)",
    )
    w.set_defaults(func=cmd_worker)

    m = lsub.add_parser("migrate", help="bring the league's database to this arena's schema")
    m.add_argument("dir", metavar="DIR")
    m.set_defaults(func=cmd_migrate)

    u = lsub.add_parser("user", help="accounts: add, token, disable, enable")
    usub = u.add_subparsers(dest="user_command", metavar="ACTION")
    u.set_defaults(func=lambda args: (u.print_help(), 2)[1])
    ua = usub.add_parser("add", help="create an account and print its API token (once)")
    ua.add_argument("name", metavar="NAME")
    ua.add_argument("--admin", action="store_true", help="may disable bots and users")
    _league_dir(ua)
    ua.set_defaults(func=cmd_user_add)
    ut = usub.add_parser(
        "token", help="give an account a new API token (printed once); ends its login sessions"
    )
    ut.add_argument("name", metavar="NAME")
    _league_dir(ut)
    ut.set_defaults(func=cmd_user_token)
    for action in ("disable", "enable"):
        ud = usub.add_parser(action, help=f"{action} an account (its token)")
        ud.add_argument("name", metavar="NAME")
        _league_dir(ud)
        ud.set_defaults(func=cmd_user_disable, disabled=action == "disable")

    b = lsub.add_parser("bot", help="operator: add a trusted bot directory to the ladder")
    bsub = b.add_subparsers(dest="bot_command", metavar="ACTION")
    b.set_defaults(func=lambda args: (b.print_help(), 2)[1])
    ba = bsub.add_parser(
        "add",
        help="add a bot directory as a new version owned by USER, without validation",
    )
    ba.add_argument("bot_dir", metavar="BOT_DIR")
    ba.add_argument("--owner", required=True, metavar="USER")
    _league_dir(ba)
    ba.set_defaults(func=cmd_bot_add)

    # seasons and finals (arena/cli/league_seasons.py)
    from arena.cli import league_seasons

    league_seasons.register(lsub, _league_dir, _open)

    # the client side: upload a bot to a league server (arena/league/client.py, imported when
    # the command runs: `arena --help` imports no arena.league module, see
    # tests/referee/test_cli_imports.py)
    _register_submit(lsub)
    _register_client(lsub)


#: the token when --token is not given (keeps it out of shell history and `ps`)
TOKEN_ENV = "ARENA_TOKEN"
#: validation plays several games before the server has a report
SUBMIT_TIMEOUT = 600.0
#: how long --wait follows a candidate verdict (as arena/league/client.py's VERDICT_TIMEOUT)
VERDICT_TIMEOUT = 3600.0


def _register_submit(lsub: argparse._SubParsersAction) -> None:
    p = lsub.add_parser(
        "submit",
        help="upload a bot directory to a league server",
        description="Pack BOT_DIR (a directory holding bot.toml) and submit it as a new "
        "version of your bot; the server validates it before it joins the ladder.",
    )
    p.add_argument("url", metavar="URL", help="the league's address, e.g. https://league.example")
    p.add_argument("bot_dir", metavar="BOT_DIR", help="the bot's directory (with bot.toml)")
    p.add_argument("--token", default=None, help=f"your API token (default: ${TOKEN_ENV})")
    p.add_argument(
        "--timeout",
        type=float,
        default=SUBMIT_TIMEOUT,
        metavar="SECONDS",
        help="how long to wait for the server's answer, and with --wait for the validation "
        f"(default {SUBMIT_TIMEOUT:g})",
    )
    p.add_argument(
        "--wait",
        action="store_true",
        help="wait for the validation and print its outcome (exit 1 if it failed), then for "
        "the candidate verdict against your previous version, one line per update",
    )
    p.add_argument(
        "--verdict-timeout",
        type=_seconds,
        default=VERDICT_TIMEOUT,
        metavar="SECONDS",
        help=f"with --wait, how long to follow the verdict (default {VERDICT_TIMEOUT:g}; "
        "the test goes on after)",
    )
    p.add_argument("--json", action="store_true", help="print the server's answer as JSON")
    p.set_defaults(func=cmd_submit)


def cmd_submit(args: argparse.Namespace) -> int:
    from arena.league.client import run_submit

    return run_submit(
        args.url,
        args.bot_dir,
        args.token,
        wait=args.wait,
        as_json=args.json,
        timeout=args.timeout,
        verdict_timeout=args.verdict_timeout,
    )


def _register_client(lsub: argparse._SubParsersAction) -> None:
    """The league client's reads, like Kaggle's CLI: the league's URL first, the same token as
    `submit` (docs/league.md, "The league client")."""

    def common(p: argparse.ArgumentParser, json_too: bool = True) -> None:
        p.add_argument(
            "url", metavar="URL", help="the league's address, e.g. https://league.example"
        )
        p.add_argument("--token", default=None, help=f"your API token (default: ${TOKEN_ENV})")
        if json_too:
            p.add_argument("--json", action="store_true", help="print the API's JSON")

    lb = lsub.add_parser(
        "leaderboard",
        help="a league's tables, with each bot's 95%% rank interval",
        description="Print each variant's leaderboard (or VARIANT's): place by rating, the 95%% "
        "interval of the bot's true place, rating, games, results, official Elo.",
    )
    common(lb)
    lb.add_argument("variant", nargs="?", metavar="VARIANT", help="one variant (default: all)")
    lb.add_argument("--limit", type=_count, default=50, metavar="N", help="rows a variant (50)")
    lb.set_defaults(func=cmd_leaderboard)

    g = lsub.add_parser(
        "games",
        help="finished games, newest first, with filters",
        description="List a league's finished games, newest first by finish time.",
    )
    common(g)
    _game_filters(g)
    g.add_argument("--result", choices=("win", "draw", "loss", "forfeit"), help="as --bot saw it")
    g.add_argument("--reason", metavar="CODE", help="ended by this reason (time_forfeit, ...)")
    g.add_argument("--limit", type=_count, default=50, metavar="N", help="games at most (50)")
    g.set_defaults(func=cmd_games)

    d = lsub.add_parser(
        "download",
        help="a game's record to a file, or every game of a bot since a date",
        description="Download GAME's record (arena-record/1, for `arena replay`) to a file, or "
        "with --bot NAME --since DATE every finished game of that bot since then as "
        "DIR/game-ID.json; files already there are skipped, so running it again resumes.",
    )
    common(d, json_too=False)
    d.add_argument("game", nargs="?", type=_game_id, metavar="GAME", help="a game id")
    _game_filters(d)
    d.add_argument(
        "-o",
        "--output",
        metavar="PATH",
        help="GAME: the file (default game-GAME.json); --bot: the directory (default .)",
    )
    d.set_defaults(func=cmd_download)

    lg = lsub.add_parser(
        "logs",
        help="your bot's stderr and log lines in a game (owner only)",
        description="Print the stderr and the log lines of your bot(s) in GAME; only the bot's "
        "owner (or an admin) may read them.",
    )
    common(lg)
    lg.add_argument("game", type=_game_id, metavar="GAME", help="a game id")
    lg.set_defaults(func=cmd_logs)


def _game_filters(p: argparse.ArgumentParser) -> None:
    p.add_argument("--bot", metavar="NAME", help="games of this bot")
    p.add_argument("--variant", metavar="LABEL", help="games of this variant")
    p.add_argument("--since", metavar="DATE", help="finished at or after (ISO 8601, UTC)")
    p.add_argument("--until", metavar="DATE", help="finished before (ISO 8601, UTC)")


def cmd_leaderboard(args: argparse.Namespace) -> int:
    from arena.league.client import run_leaderboard

    return run_leaderboard(args.url, args.variant, args.token, limit=args.limit, as_json=args.json)


def cmd_games(args: argparse.Namespace) -> int:
    from arena.league.client import run_games

    filters = {
        "bot": args.bot,
        "variant": args.variant,
        "since": args.since,
        "until": args.until,
        "result": args.result,
        "reason": args.reason,
    }
    return run_games(args.url, filters, args.token, limit=args.limit, as_json=args.json)


def cmd_download(args: argparse.Namespace) -> int:
    from arena.league.client import run_download

    return run_download(
        args.url,
        args.game,
        args.token,
        bot=args.bot,
        since=args.since,
        until=args.until,
        variant=args.variant,
        output=args.output,
    )


def cmd_logs(args: argparse.Namespace) -> int:
    from arena.league.client import run_logs

    return run_logs(args.url, args.game, args.token, as_json=args.json)


def _count(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 1_000_000:
        raise argparse.ArgumentTypeError(f"expected an integer from 1 to 1000000, got {text!r}")
    return int(text)


def _game_id(text: str) -> int:
    if not text.isdigit() or not 0 <= int(text) < 2**63:
        raise argparse.ArgumentTypeError(f"expected a game id (a number), got {text!r}")
    return int(text)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not 0 < value <= 86400:
        raise argparse.ArgumentTypeError(f"expected 0 < seconds <= 86400, got {text!r}")
    return value


def _positive_int(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 1024:
        raise argparse.ArgumentTypeError(f"expected an integer from 1 to 1024, got {text!r}")
    return int(text)


def _league_dir(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "-C",
        "--league",
        default=".",
        metavar="DIR",
        help="the league directory (default: the current directory)",
    )


def _open(directory: str) -> Any:
    from arena.league.db.database import Database
    from arena.league.migrations import check_current
    from arena.league.service import League
    from arena.league.settings import load_settings

    settings = load_settings(directory)
    db = Database(settings.database_url)
    check_current(db.engine)
    return League(settings, db)


def cmd_init(args: argparse.Namespace) -> int:
    from arena.league.db.database import Database
    from arena.league.migrations import upgrade
    from arena.league.settings import (
        DEFAULT_TOML,
        SETTINGS_NAME,
        load_settings,
        write_default,
        write_private,
    )

    root = Path(args.dir).expanduser().resolve()
    name = args.name or root.name or "league"
    path = write_default(root, name)
    if args.database:
        text = DEFAULT_TOML.format(name=name).replace(
            'database = "sqlite:///league.sqlite"', f"database = {_toml_string(args.database)}"
        )
        write_private(path, text)
    try:
        settings = load_settings(root)
        # 0700: a bot's uid cannot reach them, so the sandbox shows each bot (and each build)
        # only its own directory, never other versions or the archives; the database (its
        # session key, the worker secret, tokens' hashes) and league.toml (maybe a database
        # password) are 0600 (docs/security.md)
        for directory in (root, settings.bots_dir, settings.archives_dir):
            directory.mkdir(mode=0o700, exist_ok=True)
            directory.chmod(0o700)
        _private_sqlite(settings.database_url)
        db = Database(settings.database_url)
        try:
            upgrade(db.engine)
            _install_queue(db)
        finally:
            db.dispose()
    except BaseException:
        path.unlink()
        raise
    print(f"created the league {name!r} in {root}")
    print(f"  settings: {root / SETTINGS_NAME}")
    print(f"  next: arena league user add NAME --admin -C {args.dir}")
    print(f"        arena league serve {args.dir}")
    return 0


def _private_sqlite(url: str) -> None:
    """Create a SQLite database file 0600 before SQLite does (it would follow the umask); its
    journal files take the same mode from it."""
    prefix = "sqlite:///"
    if not url.startswith(prefix) or url[len(prefix) :] in ("", ":memory:"):
        return
    path = Path(url[len(prefix) :])
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        os.fchmod(fd, 0o600)
    finally:
        os.close(fd)


def _install_queue(db: Any) -> bool:
    """On PostgreSQL, the job queue's tables (procrastinate's schema) for remote workers."""
    from arena.league import queue

    return not db.is_sqlite and queue.install_schema(db.engine)


def _toml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def cmd_migrate(args: argparse.Namespace) -> int:
    from arena.league.db.database import Database
    from arena.league.migrations import current_revision, head_revision, upgrade
    from arena.league.settings import load_settings

    settings = load_settings(args.dir)
    db = Database(settings.database_url)
    try:
        before = current_revision(db.engine)
        upgrade(db.engine)
        after = head_revision()
        if _install_queue(db):
            print("installed the job queue's schema (procrastinate)")
    except Exception as e:
        raise ArenaError(f"cannot migrate {settings.database_url}: {e}") from None
    finally:
        db.dispose()
    if before == after:
        print(f"the database is at the newest schema revision ({after})")
    else:
        print(f"migrated the database from revision {before or 'none'} to {after}")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    import trio

    from arena.league.confinement import confinement_problem
    from arena.league.server import serve
    from arena.league.settings import ConfigError, load_settings

    settings = load_settings(args.dir)
    problem = confinement_problem(settings.isolation)
    if problem and not args.unsafe:
        raise ConfigError(
            f"{problem}; refusing to run strangers' bots unconfined "
            "(pass --unsafe to serve anyway, on a machine you can lose)"
        )
    if problem:
        print(f"arena league: WARNING: --unsafe: {problem}", file=sys.stderr)
    if args.listen:
        host, sep, port = args.listen.rpartition(":")
        if not sep or not host or not port.isdigit():
            raise ConfigError(f"--listen: expected HOST:PORT, got {args.listen!r}")
        settings = dataclasses.replace(settings, host=host.strip("[]"), port=int(port))

    def ready(binds: list[str]) -> None:
        for url in binds:
            print(f"arena league: serving {settings.name!r} on {url}", flush=True)

    executor = None
    if args.no_local_games:
        from arena.league.executors.remote import QueueExecutor
        from arena.league.queue import is_postgres

        if not is_postgres(settings.database_url):
            raise ConfigError(
                "--no-local-games: the job queue needs a PostgreSQL database "
                f"(league.toml has {settings.database!r})"
            )
        executor = QueueExecutor(
            settings, public_url=args.public_url, stalled_after=args.stalled_after
        )
    trio.run(lambda: serve(settings, unsafe=args.unsafe, on_ready=ready, executor=executor))
    print("arena league: stopped", file=sys.stderr)
    return 0


def cmd_worker(args: argparse.Namespace) -> int:
    from arena.league.worker import WorkerConfig, run

    config = WorkerConfig(
        database=args.database,
        concurrency=args.concurrency,
        name=args.name,
        server=args.server,
        shared=Path(args.archives).expanduser() if args.archives else None,
        cache=Path(args.cache).expanduser(),
        heartbeat=args.heartbeat,
        stalled_after=args.stalled_after,
        retry_wait=args.retry_wait,
        grace=args.grace,
        unsafe=args.unsafe,
        force=args.force,
    )
    return run(config)


def cmd_user_add(args: argparse.Namespace) -> int:
    league = _open(args.league)
    try:
        user, token = league.add_user(args.name, is_admin=args.admin)
    finally:
        league.db.dispose()
    role = "admin" if user.is_admin else "user"
    print(f"created {role} {user.name!r}; API token (shown only now, keep it):", file=sys.stderr)
    print(token)
    return 0


def cmd_user_token(args: argparse.Namespace) -> int:
    league = _open(args.league)
    try:
        token = league.rotate_token_sync(args.name)
    finally:
        league.db.dispose()
    print(
        f"new API token for {args.name!r} (shown only now; the old one is void):", file=sys.stderr
    )
    print(token)
    return 0


def cmd_user_disable(args: argparse.Namespace) -> int:
    league = _open(args.league)
    try:
        league.set_user_disabled_sync(args.name, args.disabled)
    finally:
        league.db.dispose()
    print(f"{'disabled' if args.disabled else 'enabled'} user {args.name!r}")
    return 0


def cmd_bot_add(args: argparse.Namespace) -> int:
    league = _open(args.league)
    try:
        v = league.add_house_bot(args.owner, Path(args.bot_dir))
    finally:
        league.db.dispose()
    print(f"added {v.bot} version {v.number} (id {v.id}); it joins the ladder now")
    return 0
