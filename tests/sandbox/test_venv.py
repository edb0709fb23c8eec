"""Bots whose interpreter is a virtual environment's, named by path: the environment (its
`pyvenv.cfg`, its own site-packages) must survive the bot description and the sandbox. The
venv's `bin/python` is a symlink to the base interpreter; resolving it runs the base one and
the environment's packages vanish."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from arena.referee import load_bot
from arena.sandbox.process import ProcessLauncher, capabilities

ROOT = Path(__file__).resolve().parents[2]
MARKER = "arena_venv_marker"


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv (system site-packages visible, so msgpack and the SDK are) with one module of
    its own, inside a directory only its owner can enter, as /root is (pytest's tmp is 0700:
    a bot's unprivileged uid reaches the venv only through the sandbox's exposures)."""
    where = tmp_path_factory.mktemp("venv-home")
    where.chmod(0o700)
    env = where / "env"
    subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(env)],
        check=True,
        timeout=120,
    )
    purelib = subprocess.run(
        [
            str(env / "bin" / "python"),
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(purelib, f"{MARKER}.py").write_text("WHERE = 'venv'\n")
    os.chmod(purelib, 0o755)
    return env


def test_the_command_keeps_the_venv_interpreter_path(venv: Path) -> None:
    python = venv / "bin" / "python3"
    assert python.is_symlink() or (venv / "bin" / "python").is_symlink()
    bot = load_bot(f"{python} -c pass")
    assert bot.command[0] == str(python)


async def test_the_sandboxed_bot_sees_the_venvs_packages(venv: Path) -> None:
    code = f"import os, {MARKER}; print({MARKER}.WHERE, os.getuid())"
    bot = load_bot(f"{venv / 'bin' / 'python3'} -c {json.dumps(code)}")
    async with trio.open_nursery() as nursery:
        proc = await ProcessLauncher().start(bot.launch_spec(), nursery)
        async with proc:
            out = b""
            with trio.fail_after(60):
                while chunk := await proc.stdout.receive_some(4096):
                    out += chunk
                info = await proc.wait()
    assert info.returncode == 0, proc.stderr_tail()
    where, uid = out.decode().split()
    assert where == "venv"
    caps = capabilities()
    if caps.uids and caps.mountns:  # the exposures were needed, and used
        assert int(uid) != os.getuid(), proc.notes  # type: ignore[attr-defined]


def test_a_venv_bot_plays_a_match(venv: Path, tmp_path: Path) -> None:
    script = tmp_path / "venv_bot.py"
    script.write_text(
        f"import runpy, {MARKER}\n"
        f"runpy.run_path({str(ROOT / 'bots' / 'random-py' / 'bot.py')!r}, run_name='__main__')\n"
    )
    script.chmod(0o644)
    result = subprocess.run(
        [sys.executable, "-m", "arena", "match", "stripes", f"{venv / 'bin' / 'python3'} {script}",
         str(ROOT / "bots" / "random-py"), "--json", "--tc", "30+1", "--startup", "30"],
        capture_output=True, text=True, timeout=180, cwd=ROOT,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["reason"] not in ("failed_start", "crash", "protocol_error"), summary
