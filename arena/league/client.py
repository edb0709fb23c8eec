"""`arena league submit`: upload a bot directory to a league server.

The client is deliberately small and uses only the standard library (urllib), so submitting
needs nothing but the arena itself: the directory is packed with `pack_bot_dir` (deterministic,
so the same directory is the same archive), POSTed to `URL/api/v1/bots` as
`application/gzip` with the user's bearer token, and the server's JSON answer is shown. Every
failure (unreachable server, wrong token, refused archive) is one line naming the problem,
with the server's own message when it sent one.

`--wait` follows the version (GET its `url`, once a second) through its validation and then,
for a version that replaced an earlier one, its candidate verdicts (docs/league.md, "Candidate
verdicts"): one line per variant each time its figures change, until every test is over, or
`--verdict-timeout` passes (an error saying the test goes on). Ctrl-C stops following, not the
test, and says where to look.
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from arena import __version__
from arena.errors import ArenaError
from arena.league.archives import pack_bot_dir
from arena.referee.channel import STDERR_SEPARATOR

SUBMIT_PATH = "/api/v1/bots"
#: the token when --token is not given (keeps it out of shell history and `ps`)
TOKEN_ENV = "ARENA_TOKEN"  # as arena/cli/league.py
#: validation can play several games before the server answers
DEFAULT_TIMEOUT = 600.0
#: how long `--wait` follows candidate verdicts (hundreds of games at the most)
VERDICT_TIMEOUT = 3600.0


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
        raise ArenaError(f"{url}: {_http_problem(exc)}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
        raise ArenaError(f"cannot reach {url}: {reason}") from None
    try:
        return json.loads(body)
    except ValueError:
        raise ArenaError(f"{url}: the answer is not JSON: {_snippet(body)}") from None


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
    parts = urllib.parse.urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ArenaError(f"league URL {url!r}: expected http://HOST[:PORT] or https://...")
    return urllib.parse.urlunsplit(
        (parts.scheme, parts.netloc, parts.path.rstrip("/") + SUBMIT_PATH, "", "")
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
    token = token or os.environ.get(TOKEN_ENV)
    if not token:
        raise ArenaError(f"no token: pass --token TOKEN or set {TOKEN_ENV}")
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
            print(f"arena: stopped following; the test goes on: GET {target}", file=sys.stderr)
            raise
        if not as_json:
            print(describe_verdicts(version), flush=True)
    if as_json:
        print(json.dumps(version, ensure_ascii=False), flush=True)
    return 0 if passed else 1
