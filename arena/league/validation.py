"""A new version's entrance test, as Kaggle does it: short games before any rated one.

A submitted version first plays a short game of every enabled variant, in both seats, against
the bundled random bot, under the league's own sandbox, limits and time control. It joins the
ladder only if it forfeits none of them (an illegal action, a timeout, a crash, a protocol
error, a failed start); anything less would only feed the ladder forfeits. The owner is told
exactly why, in the words `arena check` uses locally (arena/referee/check.py), with the tail of
the bot's stderr. Before the games: the manifest must load and keep the bot inside its own
directory, the build step, if any, must succeed in the build sandbox, and the program must be
startable (`arena.referee.preflight.check_startable`, as `arena check` asks).

Failures are told apart as everywhere in the league: the bot's mistakes make a failed report;
the platform's (a sandbox fault, a referee bug) raise PlatformFault, and validation is simply
run again later. A game the sparring bot forfeits is reported as inconclusive and does not
fail the version.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import trio

from arena.games import game_class
from arena.league.errors import LeagueError, PlatformFault
from arena.league.privacy import neutral_paths, stderr_excerpt
from arena.referee import (
    BotError,
    BotSpec,
    BuildError,
    MatchConfig,
    TimeControl,
    load_bot,
    play_match,
)
from arena.referee.bots import MANIFEST_NAME, load_manifest
from arena.referee.build import BUILD_LIMITS, BUILD_TIMEOUT, build_bot
from arena.referee.check import CHECK_MAX_TURNS, CHECK_OPPONENT, check_problem, handshake_failed
from arena.referee.preflight import check_startable
from arena.sandbox import Limits, SandboxFault

STDERR_LINES = 20


@dataclass(frozen=True)
class GameCheck:
    """One validation game, from the submitted bot's point of view."""

    variant: str
    options: dict[str, Any]
    seat: int
    colour: str
    passed: bool
    #: the game's reason code (`max_turns`, `time_forfeit`, `illegal_action`, `crash`, ...)
    reason: str
    #: the `arena check` sentence for the bot's failure; None when it did nothing wrong
    problem: str | None
    turns: int
    #: the bot's stderr in this game: its last Python traceback whole, else its last lines
    #: (`privacy.stderr_excerpt`); for its owner only
    stderr_tail: str
    inconclusive: bool = False  # the sparring bot failed: says nothing about this bot


@dataclass(frozen=True)
class ValidationReport:
    """Whether a version may join the ladder, and if not, exactly why."""

    passed: bool
    #: where it stopped: "manifest", "build", "start" (cannot start at all: program missing,
    #: not executable, no image), "games", or "passed"
    stage: str
    #: one line for the owner: the first failure (None when passed)
    problem: str | None
    games: tuple[GameCheck, ...] = ()
    #: the bot's stderr in the failing game (or the last game), last lines
    stderr_tail: str = ""
    #: the tail of the build's output (failed or not), "" without a build step
    build_output: str = ""
    bot_name: str = ""
    warnings: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data (the API's and the pages' view)."""
        return asdict(self)


def load_submitted_bot(bot_dir: Path) -> BotSpec:
    """The manifest of an unpacked submission, refused (LeagueError 422, field "bot.toml")
    when it cannot be loaded or points outside its own directory: a manifest is the
    submitter's text and must not make the league run (or read) anything of another bot."""
    top = bot_dir.resolve()
    try:
        bot = load_manifest(top / MANIFEST_NAME, source=MANIFEST_NAME)
    except BotError as exc:
        text = str(exc).replace(str(top) + "/", "").replace(str(top), ".")
        raise LeagueError(neutral_paths(text), status=422, field=MANIFEST_NAME) from None
    problem = _outside(bot, top)
    if problem is not None:
        raise LeagueError(f"{MANIFEST_NAME}: {problem}", status=422, field=MANIFEST_NAME)
    return bot


def _outside(bot: BotSpec, top: Path) -> str | None:
    """Why the manifest reaches outside its directory, if it does. The sandbox shows a bot the
    files its command names even where its uid could not reach them (an interpreter under
    /root), so a submitted command may only name files of its own: otherwise it could run or
    read another version's files."""
    if not bot.workdir.is_relative_to(top):
        return "workdir must stay inside the bot's directory"
    first, *rest = bot.command
    if "/" in first and first != sys.executable and not _inside(bot.workdir / first, top):
        return (
            f"command {first!r}: a program outside the bot's directory must be named "
            "without a path (looked up on PATH), e.g. node"
        )
    for word in rest:
        if ("/" in word or word == "..") and not _inside(bot.workdir / word, top):
            return f"command word {word!r} leads outside the bot's directory"
    if "PATH" in dict(bot.env):
        return "env.PATH cannot be set by a submitted bot"
    return None


def _inside(path: Path, top: Path) -> bool:
    return path.resolve().is_relative_to(top)


async def validate_version(
    bot_dir: Path,
    variants: list[tuple[str, dict[str, Any]]],
    limits: Limits,
    time_control: TimeControl,
    *,
    isolation: str = "process",
    opponent: Path = CHECK_OPPONENT,
    max_turns: int = CHECK_MAX_TURNS,
    build_limits: Limits = BUILD_LIMITS,
    build_time_limit: float = BUILD_TIMEOUT,
    on_step: Callable[[str], None] | None = None,
) -> ValidationReport:
    """Validate the unpacked version in `bot_dir` (built in place if its manifest says so).

    `variants` are the league's enabled (variant name, options) pairs; every one is played
    in both seats, `max_turns` turns at most, with `limits` as the ceiling for the bot's
    manifest and `isolation` replacing its isolation mode. Returns the report; raises
    PlatformFault when the platform failed (then nothing is known about the bot).
    `on_step` is told what is being done, in words (the submission page shows it).
    """
    step = on_step or (lambda _: None)
    try:
        bot = load_submitted_bot(bot_dir)
    except LeagueError as exc:
        return ValidationReport(False, "manifest", str(exc))
    build_output = ""
    step("building the bot" if bot.build else "reading the manifest")
    try:
        built = await build_bot(bot, limits=build_limits, time_limit=build_time_limit, force=True)
    except BuildError as exc:
        return ValidationReport(False, "build", str(exc), build_output=str(exc), bot_name=bot.name)
    except SandboxFault as exc:
        raise PlatformFault(f"the build sandbox failed: {exc}") from exc
    if built is not None:
        build_output = _last_lines(built.stderr.strip() or built.stdout.strip())
    step("checking that the program starts")
    try:
        await trio.to_thread.run_sync(
            partial(check_startable, bot, isolation=isolation, build=False)
        )
    except BotError as exc:
        top = str(bot.manifest.parent) if bot.manifest else str(bot.workdir)
        problem = str(exc).replace(top + "/", "")
        return ValidationReport(False, "start", problem, (), "", build_output, bot.name)
    except SandboxFault as exc:
        raise PlatformFault(f"the sandbox cannot check the bot: {exc}") from exc
    sparring = load_bot(opponent)
    games: list[GameCheck] = []
    for index, (variant, options) in enumerate(variants):
        colours = game_class(variant).colours
        for seat in (0, 1):
            step(
                f"game {len(games) + 1} of {2 * len(variants)}: {variant} as {colours[seat]}"
                " against the random bot"
            )
            config = MatchConfig(
                game=variant,
                options={**options, "max_turns": str(max_turns)},
                bots=(bot, sparring) if seat == 0 else (sparring, bot),
                time_control=time_control,
                seed=2 * index + seat,
                isolation=isolation,
                limits=limits,
            )
            try:
                record = await play_match(config)
            except PlatformFault as exc:
                raise PlatformFault(f"validation game {variant} failed: {exc}") from exc
            problem = check_problem(record, seat, bot, time_control)
            inconclusive = problem is not None and problem.startswith("the sparring bot failed")
            check = GameCheck(
                variant=variant,
                options=dict(options),
                seat=seat,
                colour=colours[seat],
                passed=problem is None or inconclusive,
                reason=str(record.result.get("reason", "")),
                problem=problem,
                turns=record.turn_count,
                stderr_tail=stderr_excerpt(record.stderr[seat]),
                inconclusive=inconclusive,
            )
            games.append(check)
            if not check.passed:
                where = f"{variant} as {check.colour}"
                if handshake_failed(record, seat):
                    where = "handshake"  # every other game would fail the same way
                return ValidationReport(
                    False,
                    "games",
                    f"{where}: {problem}",
                    tuple(games),
                    check.stderr_tail,
                    build_output,
                    bot.name,
                )
    warnings = tuple(f"{g.variant} as {g.colour}: {g.problem}" for g in games if g.inconclusive)
    tail = games[-1].stderr_tail if games else ""
    return ValidationReport(
        True, "passed", None, tuple(games), tail, build_output, bot.name, warnings
    )


def _last_lines(text: str, lines: int = STDERR_LINES) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])
