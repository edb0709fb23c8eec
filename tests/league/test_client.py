"""`arena league submit` against a real HTTP server on loopback (http.server in a thread, the
test's stand-in for the league): what it sends, what it prints, and one-line errors."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.cli import main
from arena.league.archives import inspect_archive
from arena.league.client import describe_answer, submit_url

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "s3cret-token"
WRONG = ("--token", "wrong")


class League(http.server.BaseHTTPRequestHandler):
    """Accepts POST /api/v1/bots with the right token and a valid archive, as the league does."""

    received: list[dict] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.received.append(
            {"path": self.path, "headers": dict(self.headers.items()), "body": body}
        )
        if self.path != "/league/api/v1/bots":
            return self.answer(404, {"error": {"status": 404, "message": "not found"}})
        if self.headers.get("Authorization") != f"Bearer {TOKEN}":
            return self.answer(401, {"error": {"status": 401, "message": "wrong token"}})
        info = inspect_archive(body)
        names = sorted(m.path for m in info.members)
        return self.answer(
            201,
            {"bot": "random-py", "version": 3, "id": 17, "status": "validating", "files": names},
        )

    def answer(self, status: int, data: dict) -> None:
        raw = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    League.received = []
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), League)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/league"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def test_submit_sends_the_packed_bot_and_prints_the_answer(server: str, capsys) -> None:
    code = main(["league", "submit", server, str(ROOT / "bots" / "random-py"), "--token", TOKEN])
    out = capsys.readouterr().out
    assert code == 0
    assert out == "submitted random-py version 3 (id 17)\nvalidation: validating\n"
    (req,) = League.received
    assert req["headers"]["Content-Type"] == "application/gzip"
    assert req["headers"]["Authorization"] == f"Bearer {TOKEN}"
    assert {m.path for m in inspect_archive(req["body"]).members} >= {"bot.toml", "bot.py"}


def test_submit_json_output(server: str, capsys) -> None:
    argv = ["league", "submit", server, str(ROOT / "bots" / "random-py"), "--json"]
    os.environ["ARENA_TOKEN"] = TOKEN
    try:
        assert main(argv) == 0
    finally:
        del os.environ["ARENA_TOKEN"]
    answer = json.loads(capsys.readouterr().out)
    assert answer["id"] == 17 and "bot.toml" in answer["files"]


def test_wrong_token_is_one_line_exit_2(server: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "arena", "league", "submit", server, "bots/random-py", *WRONG],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == (f"arena: error: {server}/api/v1/bots: HTTP 401: wrong token\n")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["ftp://x", "bots/random-py", "--token", "t"], "league URL 'ftp://x': expected http"),
        (["http://127.0.0.1:9", "bots/random-py"], "no token: pass --token TOKEN"),
        (["http://127.0.0.1:9", "bots", "--token", "t"], "bots: no bot.toml"),
        (["http://127.0.0.1:9", "bots/random-py", "--token", "t"], "cannot reach http://127"),
    ],
)
def test_bad_input_is_one_line(argv: list[str], message: str, capsys, monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("ARENA_TOKEN", raising=False)
    assert main(["league", "submit", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("arena: error: ") and err.count("\n") == 1
    assert message in err


def test_submit_url_and_answer_shapes() -> None:
    assert submit_url("https://l.example/") == "https://l.example/api/v1/bots"
    assert submit_url("http://h:8000/x") == "http://h:8000/x/api/v1/bots"
    problem = "stripes as black: crashed: exited with status 3"
    answer = {
        "version": {"bot": "b", "number": 2},
        "validation": {"status": "failed", "problem": problem},
    }
    assert describe_answer(answer) == f"submitted b version 2\nvalidation: failed\n  {problem}"


def test_a_crash_quoting_its_stderr_shows_each_stderr_line_once():
    from arena.league.client import describe_validation
    from arena.referee.channel import STDERR_SEPARATOR

    tail = "Traceback (most recent call last):\nJSONDecodeError: Expecting value"
    report = {
        "passed": False,
        "stage": "games",
        "problem": f"handshake: did not answer hello{STDERR_SEPARATOR}{tail}",
        "stderr_tail": tail,
    }
    text, passed = describe_validation({"validation": report})
    assert not passed
    assert text.count("JSONDecodeError") == 1 and text.count("Traceback") == 1
    assert "  stderr: JSONDecodeError: Expecting value" in text.splitlines()
    report["problem"] = "handshake: did not answer hello"
    text, _ = describe_validation({"validation": report})
    assert text.count("JSONDecodeError") == 1
