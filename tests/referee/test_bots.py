"""Bot descriptions: manifests, directories, command lines, the build step, the hash."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.referee import BotError, BuildError, load_bot
from arena.sandbox import Limits, LimitsError

ROOT = Path(__file__).resolve().parents[2]


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_directory_manifest_and_command_line_are_equivalent(tmp_path):
    write(tmp_path / "bot.toml", 'name = "b"\ncommand = "python3 bot.py --fast"\nversion = "2"\n')
    write(tmp_path / "bot.py", "print()\n")
    by_dir = load_bot(tmp_path)
    by_file = load_bot(tmp_path / "bot.toml")
    assert by_dir.name == by_file.name == "b"
    assert by_dir.command == by_file.command == (sys.executable, "bot.py", "--fast")
    assert by_dir.workdir == tmp_path.resolve()
    assert by_dir.encoding == "msgpack" and by_dir.version == "2"
    assert by_dir.source == str(tmp_path)
    spec = by_dir.launch_spec()
    assert spec.workdir == tmp_path.resolve() and spec.isolation == "process"


def test_plain_command_line(tmp_path, monkeypatch):
    write(tmp_path / "mybot.py", "print()\n")
    monkeypatch.chdir(tmp_path)
    bot = load_bot("json:python3 mybot.py")
    assert bot.encoding == "json"
    assert bot.name == "mybot"
    assert bot.command == (sys.executable, str(tmp_path / "mybot.py"))
    assert bot.manifest is None
    # a plain command gets a fresh working directory of its own
    assert bot.launch_spec().workdir is None
    exe = write(tmp_path / "runme", "#!/bin/sh\n")
    exe.chmod(0o755)
    assert load_bot("./runme").command == (str(exe),)
    assert load_bot("./runme").name == "runme"


def test_manifest_details(tmp_path):
    (tmp_path / "sub").mkdir()
    write(
        tmp_path / "bot.toml",
        """
name = "full"
command = ["./run", "--x"]
workdir = "sub"
encoding = "json"
author = "me"
description = "d"
language = "sh"
isolation = "docker"
image = "arena/full"
[env]
DEPTH = "3"
[limits]
memory_mb = 256
network = false
""",
    )
    bot = load_bot(tmp_path)
    assert bot.workdir == (tmp_path / "sub").resolve()
    assert bot.isolation == "docker" and bot.image == "arena/full"
    assert bot.limits == Limits.requested(memory_mb=256)
    spec = bot.launch_spec(isolation="process", cpu_affinity=(1,))
    assert spec.isolation == "process" and spec.cpu_affinity == (1,)
    assert spec.limits == Limits(memory_mb=256)  # the rest at the built-in ceiling
    assert spec.env == {"DEPTH": "3"}


@pytest.mark.parametrize(
    "text, error",
    [
        ('command = ["x"]\n', "missing required key 'name'"),
        ('name = "a"\n', "missing required key 'command'"),
        ('name = "a"\ncommand = []\n', "command is empty"),
        ('name = "a"\ncommand = [1]\n', "command must be a list of strings or a string"),
        ('name = "a"\ncommand = "x"\nencoding = "xml"\n', "encoding must be one of msgpack, json"),
        ('name = "a"\ncommand = "x"\ncomand = "y"\n', "unknown key 'comand'"),
        ('name = "a"\ncommand = "x"\nisolation = "vm"\n', "isolation must be one of"),
        ('name = "a"\ncommand = "x"\nisolation = "docker"\n', "needs an image"),
        ('name = "a"\ncommand = "x"\n[limits]\nmemory = 1\n', "limits.memory is not a limit"),
        ('name = "a"\ncommand = "x"\n[limits]\nmemory_mb = "1"\n', "memory_mb must be an int"),
        ('name = "a"\ncommand = "x"\n[limits]\nmemory_mb = -5\n', "memory_mb must be from 1"),
        ('name = "a"\ncommand = "x"\n[limits]\nprocesses = 0\n', "limits.processes must be from 1"),
        ('name = "a"\ncommand = "x"\n[limits]\nopen_files = -1\n', "limits.open_files must be"),
        ('name = "a"\ncommand = "x"\n[limits]\nmemory_mb = 1e9\n', "memory_mb must be an int"),
        ('name = "a"\ncommand = "x"\n[limits]\ntmpfs_mb = 99999999\n', "limits.tmpfs_mb must be"),
        ('name = "a"\ncommand = "x"\n[limits]\nnetwork = "yes"\n', "network must be true or false"),
        ('name = "a"\ncommand = "x"\n[limits]\nnetwork = 1\n', "network must be true or false"),
        ('name = "a"\ncommand = "x"\nlimits = 5\n', "limits must be a table"),
        ('name = "a"\ncommand = "x"\nworkdir = "nope"\n', "is not a directory"),
        ('name = "a"\ncommand = "x"\n[env]\nA = 1\n', "env must be a table of strings"),
        ("name = \n", "invalid TOML"),
    ],
)
def test_manifest_errors_name_file_and_key(tmp_path, text, error):
    path = write(tmp_path / "bot.toml", text)
    with pytest.raises(BotError) as err:
        load_bot(path)
    assert error in str(err.value)
    assert str(path) in str(err.value)


def test_description_errors(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(BotError, match=r"directory has no bot\.toml"):
        load_bot(tmp_path)
    with pytest.raises(BotError, match="no such manifest"):
        load_bot("missing.toml")
    with pytest.raises(BotError, match="not found on PATH"):
        load_bot("no-such-program-anywhere --flag")
    with pytest.raises(BotError, match="does not exist"):
        load_bot("./nothing-here")
    with pytest.raises(BotError, match="empty"):
        load_bot("  ")


def test_build_runs_when_needed_and_only_then(tmp_path):
    write(tmp_path / "src.sh", "#!/bin/sh\necho v1\n").chmod(0o755)
    write(
        tmp_path / "bot.toml",
        'name = "b"\ncommand = ["./out.sh"]\nbuild = ["cp", "src.sh", "out.sh"]\n',
    )
    bot = load_bot(tmp_path)
    assert bot.needs_build()
    bot.ensure_built()
    out = tmp_path / "out.sh"
    assert out.read_text().endswith("v1\n")
    assert not bot.needs_build()
    old = time.time() - 100
    os.utime(out, (old, old))  # the source is now newer than the output
    assert bot.needs_build()
    bot.ensure_built()
    assert not bot.needs_build()


def test_failed_build_reports_the_compiler_output(tmp_path):
    write(tmp_path / "bot.toml", 'name = "b"\ncommand = ["./x"]\nbuild = "cat no-such-file"\n')
    with pytest.raises(BuildError) as err:
        load_bot(tmp_path).ensure_built()
    assert "build `cat no-such-file` failed with status 1" in str(err.value)
    assert "no-such-file" in str(err.value).splitlines()[-1]


def test_executable_hash_follows_the_bot_file(tmp_path):
    write(tmp_path / "bot.toml", 'name = "b"\ncommand = "python3 bot.py"\n')
    write(tmp_path / "bot.py", "print(1)\n")
    h1 = load_bot(tmp_path).executable_hash()
    assert load_bot(tmp_path).executable_path() == tmp_path.resolve() / "bot.py"
    write(tmp_path / "bot.py", "print(2)\n")
    h2 = load_bot(tmp_path).executable_hash()
    assert h1 != h2 and h1.startswith("sha256:")


def test_bundled_bots_load():
    for name in ("random-py", "random-c", "random-js", "strong"):
        bot = load_bot(ROOT / "bots" / name)
        assert bot.name == name
    assert load_bot(ROOT / "bots" / "random-c").build is not None


def test_a_manifest_can_only_lower_the_operators_limits(tmp_path):
    """The manifest asks, the operator's ceiling decides: a request above it gets the
    ceiling, below it gets the request, unasked limits get the ceiling, and network only
    where both want it."""
    write(
        tmp_path / "bot.toml",
        'name = "greedy"\ncommand = "x"\n[limits]\n'
        "memory_mb = 900000\nprocesses = 8\nnetwork = true\n",
    )
    bot = load_bot(tmp_path)
    default = bot.launch_spec().limits
    assert (default.memory_mb, default.processes, default.network) == (1024, 8, False)
    assert default.open_files == Limits().open_files
    generous = Limits(memory_mb=4096, open_files=1000, network=True)
    got = bot.launch_spec(ceiling=generous).limits
    assert (got.memory_mb, got.processes, got.open_files, got.network) == (4096, 8, 1000, True)
    # a bot without a manifest asks nothing: it gets exactly the ceiling
    assert load_bot("sh -c true").launch_spec(ceiling=generous).limits == generous


#: some of a manifest's [limits] (or an operator's ceiling), each within its bounds
LIMITS = st.fixed_dictionaries(
    {},
    optional={
        "memory_mb": st.integers(1, 1 << 20),
        "cpu_seconds": st.integers(1, 1 << 20),
        "processes": st.integers(1, 1 << 15),
        "open_files": st.integers(1, 1 << 20),
        "network": st.booleans(),
    },
)


@given(ask=LIMITS, cap=LIMITS)
def test_capped_limits_never_exceed_the_ceiling_nor_the_request(ask, cap):
    request, ceiling = Limits.requested(**ask), Limits(**cap)
    got = request.capped_by(ceiling)
    for key in ("memory_mb", "processes", "open_files", "file_size_mb", "tmpfs_mb"):
        value = getattr(got, key)
        assert value == min(getattr(request, key), getattr(ceiling, key))
    assert got.network == (ask.get("network", False) and cap.get("network", False))
    if "cpu_seconds" in cap:
        assert got.cpu_seconds <= cap["cpu_seconds"]
    assert got.capped_by(ceiling) == got  # capping twice changes nothing


@pytest.mark.parametrize(
    ("table", "error"),
    [
        ({"memory_mb": "lots"}, "--limit memory_mb must be an integer from 1 to 1048576"),
        ({"open_files": "0"}, "--limit open_files must be from 1 to 1048576, got 0"),
        ({"network": "maybe"}, "--limit network must be true or false"),
        ({"speed": "1"}, "--limit speed is not a limit"),
    ],
)
def test_limit_values_from_a_command_line(table, error):
    assert Limits().with_values({"memory_mb": "64", "network": "true"}, "--limit", text=True) == (
        Limits(memory_mb=64, network=True)
    )
    with pytest.raises(LimitsError) as err:
        Limits().with_values(table, "--limit", text=True)
    assert str(err.value).startswith(error), err.value
