"""The sandbox's probes of the machine (arena/sandbox/machine.py): started before a command
imports trio, their result had after it, the same as probing at once, and nothing left behind.

Behaviour, not timing: a command's order of events is read from Python's audit hooks (each
probe makes its directory with `tempfile.mkdtemp`, an audited call, as is every import), in
the command's own process.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from arena.sandbox.machine import capabilities

ROOT = Path(__file__).resolve().parents[2]
BOT = ROOT / "bots" / "random-py"

#: runs `arena ARGS...` with an audit hook that appends, in order, to the file $EVENTS:
#: "probe" for each probe's directory, "trio" for the import of trio, "spawner" for a bot
#: spawner's start, each line with the pid of the process it happened in
AUDITED = """
import os, sys
def hook(event, args):
    what = None
    if event == "tempfile.mkdtemp" and os.path.basename(args[0]).startswith("arena-probe-"):
        what = "probe"
    elif event == "import" and args[0] == "trio":
        what = "trio"
    elif event == "subprocess.Popen" and "arena.sandbox.zygote" in " ".join(map(str, args[1])):
        what = "spawner"
    if what:
        with open(os.environ["EVENTS"], "a") as f:
            f.write(f"{os.getpid()} {what}\\n")
sys.addaudithook(hook)
from arena.cli import main
raise SystemExit(main(sys.argv[1:]))
"""


def audited(tmp_path: Path, *argv: str) -> list[tuple[int, str]]:
    """The events of `arena ARGV`, in order; the command must succeed."""
    events = tmp_path / "events"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "EVENTS": str(events)}
    proc = subprocess.run(
        [sys.executable, "-c", AUDITED, *argv],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = events.read_text().split() if events.exists() else []
    return [(int(pid), what) for pid, what in zip(lines[::2], lines[1::2], strict=True)]


def first_imports(events: list[tuple[int, str]]) -> list[str]:
    """The events of the process that started the command (the first one listed) up to its
    import of trio."""
    pid = events[0][0]
    mine = [what for p, what in events if p == pid]
    return mine[: mine.index("trio") + 1] if "trio" in mine else mine


def test_arena_match_probes_the_machine_before_importing_trio_and_starts_no_spawner(tmp_path):
    """Both probes start before trio is imported (their children run during the imports),
    once; one game's two bots are forked by the arena itself, without a bot spawner."""
    game = ["wrigglers", str(BOT), str(BOT), "-o", "size=9", "-o", "max_turns=4", "-q"]
    events = audited(tmp_path, "match", *game)
    assert first_imports(events) == ["probe", "probe", "trio"]
    assert [what for _, what in events].count("probe") == 2
    assert "spawner" not in [what for _, what in events]


async def test_forking_here_ends_with_its_block() -> None:
    """`forking_here` holds for what runs inside it (a trio run started there) and not after:
    a command run in-process (tests, `arena check` in a loop) leaves the process's later bots
    to its spawner."""
    from arena.sandbox import spawner

    assert spawner._FORK_HERE.get() is False
    with spawner.forking_here():
        assert spawner._spawner() is None
    assert spawner._FORK_HERE.get() is False


def test_arena_match_in_docker_mode_probes_nothing(tmp_path):
    """`--isolation docker` starts no probe of the process sandbox (the argument error comes
    after the start: a missing bot), and leaves nothing behind."""
    events = tmp_path / "events"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "EVENTS": str(events)}
    proc = subprocess.run(
        [sys.executable, "-c", AUDITED, "match", "stripes", "no", "no", "--isolation", "docker"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert not events.exists() or "probe" not in events.read_text()


def test_tournament_run_probes_once_before_trio_for_all_its_forked_workers(tmp_path):
    """The runner starts the probes before it imports trio and has their result before it
    forks its workers, which inherit it: two probes in the whole run, not two per worker."""
    (tmp_path / "t.toml").write_text(
        f'bots = [{{ path = "{BOT}", name = "a" }}, {{ path = "{BOT}", name = "b" }}]\n'
        'games = ["stripes"]\nresults = "r.sqlite"\n'
        "concurrency = 2\noversubscribe = true\nrounds = 1\n"
    )
    events = audited(tmp_path, "tournament", "run", "t.toml", "--quiet")
    assert first_imports(events) == ["probe", "probe", "trio"]
    assert [what for _, what in events].count("probe") == 2


def test_probes_started_ahead_find_what_probing_at_once_finds(tmp_path):
    """`start_probes` then `capabilities()` is `capabilities()` at once, in another process
    (each probes once), and leaves no probe directory behind."""
    code = (
        "import sys\n"
        "from arena.sandbox import machine\n"
        "if sys.argv[1] == 'ahead':\n"
        "    machine.start_probes()\n"
        "    assert 'trio' not in sys.modules\n"
        "print(machine.capabilities())\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp_path)}
    found = {
        how: subprocess.run(
            [sys.executable, "-c", code, how],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
        for how in ("ahead", "at once")
    }
    assert found["ahead"] == found["at once"] == str(capabilities()) + "\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("arena-probe-")] == []


def test_probes_never_asked_for_are_reaped_at_exit(tmp_path):
    """A command that started the probes and ended before it needed them (a user error, bots
    that run in docker) leaves no probe directory behind (each probe is waited for first)."""
    code = "from arena.sandbox import machine\nmachine.start_probes()\n"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("arena-probe-")] == []
