"""The league client: `arena league submit`, `leaderboard`, `games`, `download`, `logs`.

The client is deliberately small and uses only the standard library (urllib), so it needs
nothing but the arena itself. `submit` packs a directory with `pack_bot_dir` (deterministic,
so the same directory is the same archive), POSTs it to `URL/api/v1/bots` as
`application/gzip` with the user's bearer token, and shows the server's JSON answer. The others
read the JSON API (docs/league.md, "The league client"), like Kaggle's CLI: every command takes
the league's URL first and the same token (`--token`, else $ARENA_TOKEN); the public reads send
it when there is one, `logs` needs it. Every failure (unreachable server, wrong token, not the
owner, no such game, a bad date) is one line naming the problem, with the server's own message
when it sent one (`ClientError`, an ArenaError: the CLI prints it without a traceback).

`submit --wait` follows the version (GET its `url`, once a second) through its validation and
then, for a version that replaced an earlier one, its candidate verdicts (docs/league.md,
"Candidate verdicts"): one line per variant each time its figures change, until every test is
over, or `--verdict-timeout` passes (one error line saying the test goes on, exit 2). Ctrl-C
stops following, not the test, and says where to look in one line (exit 130, no traceback).
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from arena import __version__
from arena.errors import ArenaError
from arena.league.archives import pack_bot_dir
from arena.league.when import table_time
from arena.referee.channel import STDERR_SEPARATOR

SUBMIT_PATH = "/api/v1/bots"
#: the token when --token is not given (keeps it out of shell history and `ps`)
TOKEN_ENV = "ARENA_TOKEN"  # as arena/cli/league.py
#: validation can play several games before the server answers
DEFAULT_TIMEOUT = 600.0
#: how long `--wait` follows candidate verdicts (hundreds of games at the most)
VERDICT_TIMEOUT = 3600.0
#: the exit status of a Ctrl-C (128 + SIGINT), as the CLI's for any command
INTERRUPTED = 130
#: the API's largest page (arena/league/web/api.py MAX_LIMIT)
PAGE = 200


class ClientError(ArenaError):
    """A league request that failed: unreachable, refused (401/403/404/422), not JSON."""


def submit(url: str, archive: bytes, token: str, *, timeout: float = DEFAULT_TIMEOUT) -> Any:
    """POST a packed bot to the league at `url`; the server's decoded JSON answer.
    Raises ArenaError with one line for every failure."""
    endpoint = submit_url(url)
    request = urllib.request.Request(
        endpoint,
        data=archive,
        method="POST",
        headers={
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/gzip",
            "Accept": "application/json",
            "User-Agent": f"arena/{__version__}",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read()
    except urllib.error.HTTPError as exc:
        raise ArenaError(f"{endpoint}: {_http_problem(exc)}") from None
    except urllib.error.URLError as exc:
        raise ArenaError(f"cannot reach {endpoint}: {exc.reason}") from None
    except (TimeoutError, OSError) as exc:
        raise ArenaError(f"cannot reach {endpoint}: {exc}") from None
    try:
        return json.loads(body)
    except ValueError:
        raise ArenaError(f"{endpoint}: the answer is not JSON: {_snippet(body)}") from None


def get_json(url: str, *, timeout: float = 30.0, token: str | None = None) -> Any:
    """GET a JSON document of the league (public endpoints need no token; with one, a
    version's report includes what only its owner sees: the bot's stderr)."""
    headers = {"Accept": "application/json", "User-Agent": f"arena/{__version__}"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read()
    except urllib.error.HTTPError as exc:
        raise ClientError(f"{url}: {_http_problem(exc)}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
        raise ClientError(f"cannot reach {url}: {reason}") from None
    try:
        return json.loads(body)
    except ValueError:
        raise ClientError(f"{url}: the answer is not JSON: {_snippet(body)}") from None


def wait_for_validation(
    url: str,
    answer: dict[str, Any],
    *,
    timeout: float,
    poll: float = 1.0,
    token: str | None = None,
) -> dict[str, Any]:
    """Follow a submission (the `url` of the server's answer) until its validation report is
    there; the version as the server shows it (to the owner of `token`: with the bot's
    stderr). ArenaError when `timeout` passes first."""
    target = version_url(url, answer)
    deadline = time.monotonic() + timeout
    while True:
        version = get_json(target, token=token)
        if isinstance(version, dict) and version.get("validation") is not None:
            return version
        if time.monotonic() > deadline:
            raise ArenaError(f"{target}: still validating after {timeout:g} s")
        time.sleep(poll)  # polling a remote server: nothing to wait on but time


def version_url(url: str, answer: dict[str, Any]) -> str:
    """The address of the version a submission became (the `url` of the server's answer)."""
    path = answer.get("url")
    if not isinstance(path, str) or not path.startswith("/"):
        raise ArenaError("the server's answer names no version to follow (no 'url')")
    parts = urllib.parse.urlsplit(url.strip())
    base = urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))
    return base + path


def testing(version: dict[str, Any]) -> bool:
    """Whether any candidate test of the version is still running."""
    return any(_is_testing(v) for v in _verdicts(version))


def _verdicts(version: dict[str, Any]) -> list[dict[str, Any]]:
    found = version.get("verdicts")
    return [v for v in found if isinstance(v, dict)] if isinstance(found, list) else []


def _is_testing(verdict: dict[str, Any]) -> bool:
    return verdict.get("state") == "testing"


def follow_verdicts(
    target: str,
    version: dict[str, Any],
    *,
    timeout: float,
    poll: float = 1.0,
    token: str | None = None,
    show: Any = print,
) -> dict[str, Any]:
    """Follow the version at `target` until none of its candidate tests is testing, handing
    `show` one line per variant whenever its figures change; the version as it ends.
    ArenaError when `timeout` passes first (the tests go on without us)."""
    deadline = time.monotonic() + timeout
    shown: dict[str, str] = {}
    while True:
        for v in _verdicts(version):
            line = _printable(str(v.get("summary") or v.get("verdict") or "?"))
            key = _printable(str(v.get("variant")))
            if shown.get(key) != line:
                show(f"verdict: {line}")
                shown[key] = line
        if not testing(version):
            return version
        if time.monotonic() > deadline:
            raise ArenaError(f"still testing after {timeout:g} s; the test goes on: GET {target}")
        time.sleep(poll)  # polling a remote server: nothing to wait on but time
        version = get_json(target, token=token)


def _printable(text: str) -> str:
    """A server's words for a terminal: no control characters (escape sequences)."""
    return "".join(c if c.isprintable() else "?" for c in text)


def describe_verdicts(version: dict[str, Any]) -> str:
    """The tests' outcomes in one line: `verdict: better (stripes), not better (papagra)`."""
    parts = [
        f"{_printable(str(v.get('verdict')))} ({_printable(str(v.get('variant')))})"
        for v in _verdicts(version)
    ]
    return "verdict: " + ", ".join(parts)


def describe_validation(version: dict[str, Any]) -> tuple[str, bool]:
    """A finished validation for a person (the `arena check` sentences), and whether it
    passed."""
    report = version.get("validation") or {}
    if report.get("passed"):
        lines = [f"validation: passed; {version.get('bot', 'the bot')} is on the ladder"]
        lines += [f"  warning: {w}" for w in report.get("warnings") or ()]
        return "\n".join(lines), True
    # a crash's problem often quotes the stderr tail already (as `arena check` prints it):
    # show those lines once, under the problem, and the separate tail only when it does not
    problem, _, quoted = str(report.get("problem")).partition(STDERR_SEPARATOR)
    lines = [f"validation: failed ({report.get('stage', '?')})", f"  {problem}"]
    tail = quoted.splitlines() if quoted else (report.get("stderr_tail") or "").splitlines()[-5:]
    lines += [f"  stderr: {line}" for line in tail]
    return "\n".join(lines), False


def submit_url(url: str) -> str:
    return api_url(url, SUBMIT_PATH)


def api_url(url: str, path: str, query: dict[str, Any] | None = None) -> str:
    """The league's `url` (its base, as people give it) joined with an API `path` and query
    (None values left out)."""
    parts = urllib.parse.urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ClientError(f"league URL {url!r}: expected http://HOST[:PORT] or https://...")
    params = {k: v for k, v in (query or {}).items() if v is not None}
    return urllib.parse.urlunsplit(
        (
            parts.scheme,
            parts.netloc,
            parts.path.rstrip("/") + path,
            urllib.parse.urlencode(params),
            "",
        )
    )


def _http_problem(exc: urllib.error.HTTPError) -> str:
    """`HTTP 401: wrong token`: the status and the server's message (its JSON error body,
    {"error": {"message": ...}}, else the start of whatever it sent)."""
    try:
        raw = exc.read()
    except OSError:
        raw = b""
    message = None
    try:
        data = json.loads(raw)
        err = data.get("error") if isinstance(data, dict) else None
        if isinstance(err, dict):
            message = err.get("message")
            if err.get("field"):
                message = f"{message} (field {err['field']})"
        elif isinstance(err, str):
            message = err
    except ValueError:
        pass
    return f"HTTP {exc.code}: {message or _snippet(raw) or exc.reason}"


def _snippet(raw: bytes, size: int = 200) -> str:
    text = raw[:size].decode("utf-8", errors="replace")
    return " ".join(text.split())


def describe_answer(answer: Any) -> str:
    """The server's answer for a person: the version it became and its validation status."""
    if not isinstance(answer, dict):
        return json.dumps(answer, ensure_ascii=False)
    version = answer.get("version")
    if isinstance(version, dict):  # {"version": {"bot": ..., "number": ...}}
        answer = {**version, **{k: v for k, v in answer.items() if k != "version"}}
        version = answer.get("number")
    lines = []
    name, ident = answer.get("bot") or answer.get("name"), answer.get("id")
    head = "submitted"
    if name:
        head += f" {name}"
    if version is not None:
        head += f" version {version}"
    if ident is not None:
        head += f" (id {ident})"
    lines.append(head)
    validation = answer.get("validation")
    status = answer.get("status")
    if isinstance(validation, dict):
        status = validation.get("status", status)
        problem = validation.get("problem")
    else:
        status = validation if isinstance(validation, str) else status
        problem = answer.get("problem")
    if status is not None:
        lines.append(f"validation: {status}")
    if problem:
        lines.append(f"  {problem}")
    if isinstance(answer.get("url"), str):
        lines.append(f"  follow it: GET {answer['url']}")
    return "\n".join(lines) if len(lines) > 1 or name or ident else json.dumps(answer)


# -- the command (its parser is in arena/cli/league.py, which imports this module only when
# `arena league submit` runs: the CLI's start-up imports no arena.league module) -----------


def run_submit(
    url: str,
    bot_dir: str,
    token: str | None,
    *,
    wait: bool,
    as_json: bool,
    timeout: float,
    verdict_timeout: float = VERDICT_TIMEOUT,
) -> int:
    """`arena league submit`: pack, upload, print; with `wait`, follow the validation (exit 1
    if the version was refused), then its candidate verdicts until they are decided."""
    token = need_token(token)
    submit_url(url)  # a bad URL before packing
    archive = pack_bot_dir(bot_dir)
    answer = submit(url, archive, token, timeout=timeout)
    if as_json and not wait:
        print(json.dumps(answer, ensure_ascii=False))
        return 0
    if not as_json:
        print(describe_answer(answer), flush=True)
    if not wait:
        return 0
    version = wait_for_validation(url, answer, timeout=timeout, token=token)
    text, passed = describe_validation(version)
    if not as_json:
        print(text, flush=True)
    if passed and _verdicts(version):
        target = version_url(url, answer)
        show = (lambda _line: None) if as_json else (lambda line: print(line, flush=True))
        try:
            version = follow_verdicts(
                target, version, timeout=verdict_timeout, token=token, show=show
            )
        except KeyboardInterrupt:
            # one line, not also the CLI's "interrupted": only the following stops
            print(f"arena: stopped following; the test goes on: GET {target}", file=sys.stderr)
            return INTERRUPTED
        if not as_json:
            print(describe_verdicts(version), flush=True)
    if as_json:
        print(json.dumps(version, ensure_ascii=False), flush=True)
    return 0 if passed else 1


# -- reading the league: leaderboard, games, download, logs ------------------------------------


def token_or_env(token: str | None) -> str | None:
    """The token given, else $ARENA_TOKEN, else None (public reads go without)."""
    return token or os.environ.get(TOKEN_ENV) or None


def need_token(token: str | None) -> str:
    found = token_or_env(token)
    if not found:
        raise ClientError(f"no token: pass --token TOKEN or set {TOKEN_ENV}")
    return found


def leaderboard(
    url: str, variant: str | None, *, token: str | None = None, limit: int = 50
) -> list[dict[str, Any]]:
    """Each variant's table (or the one asked for): [{"variant", "items": [rows]}]."""
    tok = token_or_env(token)
    if variant is None:
        status = get_json(api_url(url, "/api/v1"), token=tok)
        variants = [v["label"] for v in status.get("variants", [])]
    else:
        variants = [variant]
    tables = []
    for v in variants:
        path = "/api/v1/leaderboard/" + urllib.parse.quote(v, safe="")
        rows = _pages(url, path, {}, limit, tok)
        tables.append({"variant": v, "items": rows})
    return tables


def games(url: str, filters: dict[str, Any], *, token: str | None = None, limit: int = 50):
    """Finished games, newest first, through the API's filters (bot, variant, result, reason,
    since, until: dates checked and sent as UTC), at most `limit`."""
    query = dict(filters)
    for key in ("since", "until"):
        if query.get(key) is not None:
            query[key] = table_time(query[key], f"--{key}")
    return _pages(url, "/api/v1/games", query, limit, token_or_env(token))


def _pages(url: str, path: str, query: dict[str, Any], limit: int, token: str | None):
    items: list[Any] = []
    offset = 0
    while len(items) < limit:
        size = min(PAGE, limit - len(items))
        page = get_json(api_url(url, path, {**query, "limit": size, "offset": offset}), token=token)
        items += page.get("items", [])
        if page.get("next") is None:
            break
        offset = page["next"]
    return items[:limit]


def record(url: str, game_id: int, *, token: str | None = None) -> dict[str, Any]:
    """A finished game's arena-record/1 (stderr and logs left out: `logs` has its owner's)."""
    return get_json(api_url(url, f"/api/v1/games/{game_id}/record"), token=token_or_env(token))


def write_record(data: dict[str, Any], path: Path) -> None:
    """Write a record whole or not at all (a temporary file renamed into place), so a
    download cut short leaves no half file for the next run to take as done."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.part")
    temp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    os.replace(temp, path)


def download_games(
    url: str,
    directory: Path,
    filters: dict[str, Any],
    *,
    token: str | None = None,
    limit: int = 1_000_000,
    say=print,
) -> tuple[int, int]:
    """Every finished game the filters select (a bot since a date), each as
    DIR/game-ID.json; a file already there is skipped, so running it again resumes. The
    games downloaded and skipped."""
    got = skipped = 0
    for game in games(url, filters, token=token, limit=limit):
        path = directory / f"game-{int(game['id'])}.json"
        if path.is_file():
            skipped += 1
            continue
        write_record(record(url, int(game["id"]), token=token), path)
        got += 1
        say(f"{path}")
    return got, skipped


def logs(url: str, game_id: int, *, token: str | None) -> dict[str, Any]:
    """The stderr and log lines of the caller's bot(s) in a game (owner or admin only)."""
    return get_json(api_url(url, f"/api/v1/games/{game_id}/logs"), token=need_token(token))


def describe_leaderboard(tables: list[dict[str, Any]]) -> str:
    lines = []
    for table in tables:
        lines.append(f"{table['variant']}:")
        rows = table["items"]
        if not rows:
            lines.append("  no active bot yet")
            continue
        lines.append(
            f"  {'#':>4} {'95% place':>10}  {'bot':<24} {'ver':>4} {'rating':>8} {'mu':>7} "
            f"{'sigma':>6} {'games':>6} {'W-D-L':>12}  {'Elo':>11}  owner"
        )
        for r in rows:
            low, high = r.get("rank_low"), r.get("rank_high")
            place = "" if low is None else (f"{low}" if low == high else f"{low}-{high}")
            elo = "" if r.get("elo") is None else f"{r['elo']:+.0f}"
            if elo and r.get("elo_ci95") is not None:
                elo += f" ± {r['elo_ci95']:.0f}"
            wdl = f"{r['wins']}-{r['draws']}-{r['losses']}"
            lines.append(
                f"  {r['rank']:>4} {place:>10}  {_cell(r['bot'], 24):<24} {r['version']:>4} "
                f"{r['rating']:>8.2f} {r['mu']:>7.2f} {r['sigma']:>6.2f} {r['games']:>6} "
                f"{wdl:>12}  {elo:>11}  {_cell(r['owner'], 24)}"
            )
    return "\n".join(lines)


def describe_game(g: dict[str, Any]) -> str:
    """One line: id, finish time, variant, the seats, who won and why."""
    a, b = (f"{_cell(s['bot'], 32)} v{s['version']}" for s in g["seats"])
    if g.get("winner") is None:
        outcome = "draw" if g.get("result") else g.get("state", "?")
    else:
        outcome = f"{'first' if g['winner'] == 0 else 'second'} seat won"
    reason = f" ({_cell(g['reason'], 40)})" if g.get("reason") else ""
    return (
        f"{g['id']:>8}  {g.get('finished_at') or '-':<24}  {_cell(g['variant'], 16):<16}  "
        f"{a} vs {b}: {outcome}{reason}"
    )


def describe_logs(data: dict[str, Any]) -> str:
    lines = [f"game {data['game']} ({data['state']})"]
    for seat in data.get("seats", []):
        lines.append(f"seat {seat['seat']}: {_cell(seat['bot'], 64)} v{seat['version']}")
        stderr = seat.get("stderr") or ""
        lines.append("  stderr:" + ("" if stderr.strip() else " (empty)"))
        lines += [f"    {_printable(line)}" for line in stderr.splitlines()]
        entries = seat.get("logs") or []
        lines.append("  logs:" + ("" if entries else " (none)"))
        for e in entries:
            turn = f" turn {e['turn']}" if e.get("turn") is not None else ""
            t = e.get("t")
            when = f"{t:8.3f}s" if isinstance(t, int | float) else ""
            lines.append(f"    {when}{turn}: {_printable(str(e.get('message', '')))}")
    return "\n".join(lines)


def _printable(text: str) -> str:
    """A bot's text for a terminal: control characters (escape sequences) shown, not run."""
    return "".join(ch if ch.isprintable() or ch == "\t" else repr(ch)[1:-1] for ch in text)


def _cell(text: Any, width: int) -> str:
    text = _printable(str(text))
    return text if len(text) <= width else text[: width - 1] + "…"


# -- the commands (parsers in arena/cli/league.py) ----------------------------------------------


def run_leaderboard(url: str, variant: str | None, token: str | None, *, limit: int, as_json: bool):
    tables = leaderboard(url, variant, token=token, limit=limit)
    print(json.dumps(tables, ensure_ascii=False) if as_json else describe_leaderboard(tables))
    return 0


def run_games(
    url: str, filters: dict[str, Any], token: str | None, *, limit: int, as_json: bool
) -> int:
    found = games(url, filters, token=token, limit=limit)
    if as_json:
        print(json.dumps(found, ensure_ascii=False))
    elif not found:
        print("no game matches")
    else:
        print("\n".join(describe_game(g) for g in found))
    return 0


def run_download(
    url: str,
    game_id: int | None,
    token: str | None,
    *,
    bot: str | None,
    since: str | None,
    until: str | None,
    variant: str | None,
    output: str | None,
) -> int:
    """`download GAME [-o FILE]`, or `download --bot NAME --since DATE [-o DIR]`."""
    if game_id is not None:
        if bot or since or until or variant:
            raise ClientError("download: give a GAME, or --bot NAME --since DATE, not both")
        path = Path(output) if output else Path(f"game-{game_id}.json")
        if path.is_dir():
            path = path / f"game-{game_id}.json"
        write_record(record(url, game_id, token=token), path)
        print(path)
        return 0
    if not bot or not since:
        raise ClientError("download: give a GAME, or --bot NAME --since DATE")
    directory = Path(output or ".")
    if directory.exists() and not directory.is_dir():
        raise ClientError(f"-o {output}: not a directory")
    filters = {"bot": bot, "since": since, "until": until, "variant": variant}
    got, skipped = download_games(url, directory, filters, token=token)
    print(f"downloaded {got} game{'s' if got != 1 else ''} to {directory}, {skipped} already there")
    return 0


def run_logs(url: str, game_id: int, token: str | None, *, as_json: bool) -> int:
    data = logs(url, game_id, token=token)
    print(json.dumps(data, ensure_ascii=False) if as_json else describe_logs(data))
    return 0
