"""What of a bot's text and of the server's own paths the league shows, and to whom.

A bot's stderr is its owner's: it can hold anything the bot printed (its strategy's
internals, a traceback of its code). The referee quotes it in several places besides the
record's `stderr` (a crash's `detail` ends with the last stderr lines, a failure's
`stderr_tail`, the validation report's problem and tails, a build's output), so the public
view of each is made here, once, and every page and endpoint that shows one to somebody
other than the bot's owner (or an admin) goes through it: `public_report`, `public_detail`,
`public_record`. A bot's logs and debug marks are its owner's too (they show how it thinks):
the public record and replay leave them out, with stderr and its per-turn cuts, and
`owner_record` gives back exactly one owner's seats of them, for the replay its owner sees.
Owner-only text is cut where the referee joins it (`STDERR_SEPARATOR`, a
build's `:\\n` before its output), not guessed at.

Server paths are nobody's business, the owner's included: where the league is installed, the
interpreter's virtualenv, the league directory, a worker's cache. `neutral_paths` replaces
the bot's own directory by `<bot>`, the arena's install and its interpreter's prefix by
`<arena>`, the standard library by `<python>`, and any other absolute path by `…/` and its
last component (a worker on another machine has paths this server cannot know). It runs at
display time, on everything that reaches a page or the API, so reports and reasons recorded
before this existed are shown the same way.
"""

from __future__ import annotations

import re
import sys
import sysconfig
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

from arena.referee.channel import STDERR_SEPARATOR

#: what a build failure's message puts between its sentence and the build's output
BUILD_SEPARATOR = ":\n"
#: the start of a Python traceback (the owner's report shows it whole, from here)
TRACEBACK_HEAD = "Traceback (most recent call last):"
_CHAINED = (
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
)
#: an absolute path left after the known prefixes: a "/" that starts a word (not a URL's,
#: not one inside a word) followed by at least two components
_PATH = re.compile(r"(?<![\w.~:/<>\-])(/[^\s/'\"`(),;:<>\[\]{}|]+)+/([^\s/'\"`(),;:<>\[\]{}|]*)")


@cache
def _server_prefixes() -> tuple[tuple[str, str], ...]:
    """(prefix, neutral word), longest first: this process's install and interpreter."""
    import arena

    pairs = {
        str(Path(arena.__file__).resolve().parent.parent): "<arena>",
        sys.prefix: "<arena>",
        sys.exec_prefix: "<arena>",
        str(Path(sys.executable).parent.parent): "<arena>",
    }
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            pairs.setdefault(path, "<python>")
    # a system interpreter's prefix is the system's (/usr): its other programs are not ours
    # to rename; the generic rule below covers them
    shared = {"", "/", "/usr", "/usr/local", "/opt"}
    return tuple(
        sorted(
            ((p.rstrip("/"), w) for p, w in pairs.items() if p.rstrip("/") not in shared),
            key=lambda pw: -len(pw[0]),
        )
    )


def neutral_paths(text: str, bot_dirs: Iterable[str | Path | None] = ()) -> str:
    """`text` with every server path made neutral (see the module's docstring); `bot_dirs`
    are the directories shown as `<bot>` (the bot whose text it is)."""
    if not text or "/" not in text:
        return text
    prefixes: list[tuple[str, str]] = []
    for d in bot_dirs:
        if d:
            for form in {str(d), str(Path(d).resolve())}:
                prefixes.append((form.rstrip("/"), "<bot>"))
    prefixes.sort(key=lambda pw: -len(pw[0]))
    for prefix, word in (*prefixes, *_server_prefixes()):
        if prefix in text:
            text = re.sub(re.escape(prefix) + r"(?![\w.\-])", word, text)
    return _PATH.sub(lambda m: "…/" + m.group(2) if m.group(2) else "…/", text)


def public_detail(text: str | None) -> str | None:
    """A game's or a validation's sentence for everyone: without the stderr lines the referee
    appended, without a build's output, with neutral paths."""
    if not text:
        return text
    text = text.partition(STDERR_SEPARATOR)[0]
    if " build `" in text:
        text = text.partition(BUILD_SEPARATOR)[0]
    return neutral_paths(text)


def public_command(words: Iterable[str], bot_dir: str | Path | None = None) -> list[str]:
    """A manifest's command as its author would write it: the interpreter as `python3`, the
    bot's own files relative to its directory, any other path neutral."""
    top = [str(bot_dir).rstrip("/"), str(Path(bot_dir).resolve())] if bot_dir else []
    out = []
    for word in words:
        if word.startswith("/"):
            inside = next((t for t in top if word.startswith(t + "/")), None)
            if inside is not None:
                out.append(word[len(inside) + 1 :])
                continue
            if Path(word).name.startswith("python"):
                out.append("python3")
                continue
        out.append(neutral_paths(word, [bot_dir]))
    return out


def stderr_excerpt(text: str, lines: int = 20, most: int = 200) -> str:
    """The part of a bot's stderr its owner's report shows: from the start of the last Python
    traceback (with the tracebacks it is chained to) when one is there, so it is whole, at
    most `most` lines; otherwise the last `lines` lines."""
    all_lines = text.rstrip().splitlines()
    start = None
    for i in range(len(all_lines) - 1, -1, -1):
        if all_lines[i].strip() == TRACEBACK_HEAD:
            start = i
            break
    if start is None:
        return "\n".join(all_lines[-lines:])
    while True:  # walk back over "During handling of the above exception..." chains
        j = start - 1
        while j >= 0 and not all_lines[j].strip():
            j -= 1
        if j < 0 or all_lines[j].strip() not in _CHAINED:
            break
        earlier = next(
            (k for k in range(j - 1, -1, -1) if all_lines[k].strip() == TRACEBACK_HEAD), None
        )
        if earlier is None or len(all_lines) - earlier > most:
            break
        start = earlier
    kept = all_lines[start:]
    if len(kept) > most:
        kept = kept[-most:]
    return "\n".join(kept)


def public_report(report: dict[str, Any] | None) -> dict[str, Any] | None:
    """A validation report for everyone: whether it passed, where and why it stopped, each
    game's result; never the bot's stderr or build output."""
    if report is None:
        return None
    out = {k: v for k, v in report.items() if k not in ("stderr_tail", "build_output")}
    out["problem"] = public_detail(report.get("problem"))
    out["warnings"] = [public_detail(w) for w in report.get("warnings") or ()]
    out["games"] = [
        {
            **{k: v for k, v in g.items() if k != "stderr_tail"},
            "problem": public_detail(g.get("problem")),
        }
        for g in report.get("games") or ()
    ]
    return out


def owner_report(
    report: dict[str, Any] | None, bot_dir: str | Path | None
) -> dict[str, Any] | None:
    """A validation report for the bot's owner (or an admin): everything, server paths
    neutral, the problem sentences without the stderr they quote (the report's `stderr_tail`
    shows it, once)."""
    if report is None:
        return None
    dirs = [bot_dir]
    out = dict(public_report(report) or {})
    out["problem"] = neutral_paths(_sentence(report.get("problem")), dirs)
    out["warnings"] = [neutral_paths(_sentence(w), dirs) for w in report.get("warnings") or ()]
    out["stderr_tail"] = neutral_paths(report.get("stderr_tail") or "", dirs)
    out["build_output"] = neutral_paths(report.get("build_output") or "", dirs)
    out["games"] = [
        {
            **g,
            "problem": neutral_paths(_sentence(g.get("problem")), dirs) or None,
            "stderr_tail": neutral_paths(g.get("stderr_tail") or "", dirs),
        }
        for g in report.get("games") or ()
    ]
    return out


def _sentence(text: str | None) -> str:
    text = (text or "").partition(STDERR_SEPARATOR)[0]
    if " build `" in text:
        text = text.partition(BUILD_SEPARATOR)[0]
    return text


#: what of a record is its bots' owners' alone (per seat)
OWNER_FIELDS = ("stderr", "stderr_turns", "logs", "marks", "marks_dropped")


def owner_record(
    record: dict[str, Any], seats: Iterable[int], bot_dirs: dict[int, str | None] | None = None
) -> dict[str, Any]:
    """The public record with the logs, debug marks and stderr of `seats` (the caller's own
    bots, or both for an admin) put back, and nobody else's: stderr with neutral paths,
    turn by turn so that its cuts (`stderr_turns`) still fall where they did."""
    mine = set(seats)
    out = public_record(record)
    out["logs"] = [e for e in record.get("logs") or () if e.get("seat") in mine]
    out["marks"] = [e for e in record.get("marks") or () if e.get("seat") in mine]
    dropped = list(record.get("marks_dropped") or [0, 0])
    out["marks_dropped"] = [dropped[s] if s in mine and s < len(dropped) else 0 for s in (0, 1)]
    stderr, cuts = ["", ""], [[], []]
    for s in mine & {0, 1}:
        text = (record.get("stderr") or ["", ""])[s] or ""
        given = (record.get("stderr_turns") or [[], []])[s] or [[None, 0]]
        dirs = [(bot_dirs or {}).get(s)]
        at = 0
        for i, (turn, start) in enumerate(given):
            end = given[i + 1][1] if i + 1 < len(given) else len(text)
            part = neutral_paths(text[start:end], dirs)
            cuts[s].append([turn, at])
            stderr[s] += part
            at += len(part)
        if not text:
            cuts[s] = []
    out["stderr"], out["stderr_turns"] = stderr, cuts
    return out


def public_record(record: dict[str, Any]) -> dict[str, Any]:
    """A game's arena-record/1 for everyone: the owners' fields (`OWNER_FIELDS`: stderr, logs,
    debug marks) left out, the stderr lines a failure quotes cut, the bots' commands and
    sources without server paths."""
    out = {k: v for k, v in record.items() if k not in OWNER_FIELDS}
    result = dict(out.get("result") or {})
    if "detail" in result:
        result["detail"] = public_detail(result["detail"])
    if isinstance(result.get("failure"), dict):
        result["failure"] = _public_failure(result["failure"])
    out["result"] = result
    bots = []
    for bot in out.get("bots") or ():
        bot = dict(bot)
        source = bot.get("source") if isinstance(bot.get("source"), str) else None
        # a league bot's source is its version's directory: its files are shown relative
        home = source if source and source.startswith("/") else None
        if isinstance(bot.get("command"), list):
            bot["command"] = public_command([str(w) for w in bot["command"]], home)
        if source is not None:
            bot["source"] = neutral_paths(source, [home])
        bots.append(bot)
    if "bots" in out:
        out["bots"] = bots
    return out


def _public_failure(failure: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in failure.items() if k != "stderr_tail"}
    if isinstance(out.get("detail"), str):
        out["detail"] = public_detail(out["detail"])
    if isinstance(out.get("seats"), list):
        out["seats"] = [_public_failure(s) if isinstance(s, dict) else s for s in out["seats"]]
    return out


def public_manifest(manifest: dict[str, Any], bot_dir: str | Path | None) -> dict[str, Any]:
    """What the league kept of a manifest, for everyone: its command without server paths."""
    out = {k: manifest[k] for k in sorted(manifest) if k != "league_name"}
    if isinstance(out.get("command"), list):
        out["command"] = public_command([str(w) for w in out["command"]], bot_dir)
    return out
