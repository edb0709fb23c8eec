"""`arena league submit --wait` against a real `arena league serve` (SQLite): a good bot is
validated onto the ladder, a bot that crashes in one variant is refused with the `arena check`
sentence, a malicious archive never gets that far."""

from __future__ import annotations

import io
import shutil
import tarfile
from pathlib import Path

import pytest

from .support import ROOT, Server, add_user, arena, make_league

pytestmark = pytest.mark.slow

CRASHY = """import sys
from protocol.sdk import run_bot

def choose(turn, bot):
    if bot.game == "stripes":
        print("no idea how to play stripes", file=sys.stderr, flush=True)
        raise SystemExit(3)
    return bot.rng.choice(turn["legal"])

raise SystemExit(run_bot(choose, name="crashy"))
"""


@pytest.fixture
def served(tmp_path: Path):
    d = make_league(tmp_path / "league", games='["papagra", "stripes"]')
    token = add_user(d, "dana")
    with Server(d) as server:
        yield server, token


def test_submit_and_wait_for_validation(served, tmp_path: Path) -> None:
    server, token = served
    proc = arena(
        "league", "submit", server.url, "bots/random-py", "--token", token, "--wait", check=False
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "submitted random-py version 1 (id 1)"
    assert lines[1] == "validation: queued"
    assert lines[-1] == "validation: passed; random-py is on the ladder"
    version = server.get("/api/v1/bots/random-py/versions/1").json()
    assert version["state"] == "active"
    assert len(version["validation"]["games"]) == 4

    crashy = tmp_path / "crashy"
    crashy.mkdir()
    (crashy / "bot.toml").write_text('name = "crashy"\ncommand = ["python3", "bot.py"]\n')
    (crashy / "bot.py").write_text(CRASHY)
    proc = arena(
        "league", "submit", server.url, str(crashy), "--token", token, "--wait", check=False
    )
    assert proc.returncode == 1, proc.stderr
    out = proc.stdout
    assert "validation: failed (games)" in out
    assert "  stripes as " in out and ": crashed: " in out
    assert "  stderr: no idea how to play stripes" in out
    assert server.get("/api/v1/bots/crashy/versions/1").json()["state"] == "rejected"


SNOOP = """import sys
from protocol.sdk import run_bot

def choose(turn, bot):
    if not bot.memory:
        bot.memory["tried"] = True
        try:
            open(SECRET).read()
            print("LEAK", file=sys.stderr, flush=True)
            raise SystemExit(3)
        except OSError as e:
            print("hidden:", type(e).__name__, file=sys.stderr, flush=True)
    return bot.rng.choice(turn["legal"])

raise SystemExit(run_bot(choose, name="snoop"))
"""


def test_a_bot_cannot_read_another_version(served, tmp_path: Path) -> None:
    """The league keeps bots/ 0700, so each bot sees only its own directory."""
    server, token = served
    league = server.directory
    assert (league / "bots").stat().st_mode & 0o777 == 0o700
    assert (league / "archives").stat().st_mode & 0o777 == 0o700
    victim = tmp_path / "victim"
    shutil.copytree(ROOT / "bots" / "random-py", victim)
    (victim / "secret.txt").write_text("the opening book")
    proc = arena("league", "submit", server.url, str(victim), "--token", token, "--wait")
    assert "validation: passed" in proc.stdout
    secret = league / "bots" / "1" / "secret.txt"
    assert secret.read_text() == "the opening book"  # readable by the server itself
    snoop = tmp_path / "snoop"
    snoop.mkdir()
    (snoop / "bot.toml").write_text('name = "snoop"\ncommand = ["python3", "bot.py"]\n')
    (snoop / "bot.py").write_text(SNOOP.replace("SECRET", repr(str(secret))))
    proc = arena(
        "league", "submit", server.url, str(snoop), "--token", token, "--wait", check=False
    )
    assert "validation: passed" in proc.stdout, proc.stdout
    # the bot's stderr is its owner's: asked with the owner's token
    auth = {"Authorization": f"Bearer {token}"}
    report = server.get("/api/v1/bots/snoop/versions/1", headers=auth).json()["validation"]
    assert "hidden: FileNotFoundError" in report["games"][0]["stderr_tail"]


def test_refused_archive_is_one_line(served, tmp_path: Path) -> None:
    server, token = served
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "bot.toml").write_text('name = "bad"\ncommand = ["./x"]\n')
    (bad / "link").symlink_to("/etc/passwd")
    proc = arena("league", "submit", server.url, str(bad), "--token", token, check=False)
    assert proc.returncode == 2
    assert proc.stderr.startswith("arena: error: ") and "leads outside" in proc.stderr
    # the server refuses the same archive built by hand, naming the member and the rule
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(bad / "bot.toml", "bot.toml")
        info = tarfile.TarInfo("link")
        info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tar.addfile(info)
    resp = server.client.post(
        "/api/v1/bots",
        content=buf.getvalue(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/gzip"},
    )
    assert resp.status_code == 422
    assert resp.json()["error"] == {
        "status": 422,
        "message": "archive member 'link': symbolic link to '/etc/passwd' leads outside the "
        "archive (or loops)",
        "field": "archive",
    }
