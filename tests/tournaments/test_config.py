"""Config validation: good configs load with their defaults, every bad one names its key."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arena.errors import ArenaError
from arena.games import GAME_NAMES
from arena.tournaments.config import ConfigError, load_config

from .tournament_helpers import BOTS, REPO, two_bots_toml, write_config


def test_defaults(tmp_path: Path) -> None:
    cfg = load_config(write_config(tmp_path, two_bots_toml(), "mine.toml"))
    assert cfg.name == "mine"
    assert [g.name for g in cfg.games] == list(GAME_NAMES)
    assert cfg.rounds == 1
    assert cfg.concurrency == (os.cpu_count() or 1)
    assert cfg.seed == 0
    assert cfg.opening_turns == 2
    assert cfg.max_attempts == 3
    assert cfg.results == tmp_path / "results" / "mine.sqlite"
    assert cfg.time_control.base == 10.0 and cfg.time_control.increment == 0.1


def test_paths_relative_to_config(tmp_path: Path) -> None:
    sub = tmp_path / "cfgs"
    sub.mkdir()
    rel = os.path.relpath(BOTS, sub)
    text = f'bots = ["{rel}/random-py", "{rel}/random-c/bot.toml"]\nresults = "out/x.sqlite"\n'
    cfg = load_config(write_config(sub, text))
    assert cfg.bots[0].source == str(BOTS / "random-py")
    assert cfg.bots[1].source == str(BOTS / "random-c" / "bot.toml")
    assert cfg.results == sub / "out" / "x.sqlite"


def test_full_config(tmp_path: Path) -> None:
    text = (
        two_bots_toml()
        + """
name = "full"
seed = 7
rounds = 3
concurrency = 2
pin_cores = true
isolation = "docker"
max_attempts = 5
games = ["stripes", { name = "wrigglers", options = { size = 13 }, label = "wrig13" }]
[time_control]
base = 2.5
increment = 0.01
move_time = 0.5
startup = 3
margin = 0
[openings]
turns = 0
"""
    )
    cfg = load_config(write_config(tmp_path, text))
    assert (cfg.name, cfg.seed, cfg.rounds, cfg.concurrency) == ("full", 7, 3, 2)
    assert cfg.pin_cores and cfg.isolation == "docker" and cfg.max_attempts == 5
    assert [(g.name, g.label) for g in cfg.games] == [
        ("stripes", "stripes"),
        ("wrigglers", "wrig13"),
    ]
    assert cfg.games[1].options == {"size": 13}
    tc = cfg.time_control
    assert (tc.base, tc.increment, tc.move_time, tc.startup, tc.margin) == (
        2.5,
        0.01,
        0.5,
        3.0,
        0.0,
    )
    assert cfg.opening_turns == 0


def test_time_control_string_and_cli_concurrency(tmp_path: Path) -> None:
    cfg = load_config(
        write_config(tmp_path, two_bots_toml() + 'time_control = "5+0.05"\n'), concurrency=1
    )
    assert (cfg.time_control.base, cfg.time_control.increment) == (5.0, 0.05)
    assert cfg.concurrency == 1


def test_the_clock_key_beside_or_inside_the_time_control(tmp_path: Path) -> None:
    """clock = "cpu" (issue 19): beside a time control string, or inside its table."""
    cfg = load_config(
        write_config(tmp_path, two_bots_toml() + 'time_control = "5"\nclock = "cpu"\n')
    )
    assert (cfg.time_control.base, cfg.time_control.clock) == (5.0, "cpu")
    text = two_bots_toml() + 'time_control = { move_time = 1, clock = "cpu", wall_cap = 2 }\n'
    tc = load_config(write_config(tmp_path, text)).time_control
    assert (tc.clock, tc.wall_cap) == ("cpu", 2.0)
    assert load_config(write_config(tmp_path, two_bots_toml())).time_control.clock == "wall"
    assert tc.to_dict()["clock"] == "cpu"  # what every game's hello and record carry


def test_a_time_bank_and_a_first_move_time_in_the_table(tmp_path: Path) -> None:
    """issue 22.5: the same keys as everywhere, in the common table and a bot's own."""
    text = (
        f'bots = ["{BOTS / "random-py"}", {{ path = "{BOTS / "random-c"}", '
        "time_control = { move_time = 0.5, bank = 5 } }]\n"
        'time_control = { move_time = 0.2, bank = 1.5, first_move = 2, clock = "cpu" }\n'
    )
    cfg = load_config(write_config(tmp_path, text))
    tc = cfg.time_control
    assert (tc.move_time, tc.bank, tc.first_move, tc.clock) == (0.2, 1.5, 2.0, "cpu")
    assert tc.to_dict()["bank"] == 1.5 and tc.to_dict()["first_move"] == 2.0
    own = cfg.bots[1].time_control
    assert own is not None and (own.move_time, own.bank) == (0.5, 5.0)


def test_limits_table_is_the_ceiling_for_every_bot(tmp_path: Path) -> None:
    from arena.sandbox import Limits

    text = two_bots_toml() + "[limits]\nmemory_mb = 2048\nnetwork = true\n"
    cfg = load_config(write_config(tmp_path, text))
    assert cfg.limits == Limits(memory_mb=2048, network=True)
    assert cfg.to_dict()["limits"]["memory_mb"] == 2048
    assert load_config(write_config(tmp_path, two_bots_toml(), "d.toml")).limits == Limits()


def test_concurrency_zero_means_every_core_in_the_file_and_from_the_flag(tmp_path: Path) -> None:
    path = write_config(tmp_path, two_bots_toml() + "concurrency = 0\n")
    cores = os.cpu_count() or 1
    assert load_config(path).concurrency == cores
    assert load_config(path, concurrency=0).concurrency == cores
    assert load_config(path, concurrency=3).concurrency == 3


def test_bundled_examples_load() -> None:
    for name in ("bundled.toml", "quick.toml", "gauntlet.toml"):
        cfg = load_config(REPO / "tournaments" / name)
        assert len(cfg.bots) >= 2
    assert len(load_config(REPO / "tournaments" / "bundled.toml").games) == 5
    gauntlet = load_config(REPO / "tournaments" / "gauntlet.toml")
    assert gauntlet.format == "gauntlet" and gauntlet.sprt is not None
    assert len(gauntlet.games[0].openings) == 8


def test_fingerprint_ignores_rounds_and_concurrency(tmp_path: Path) -> None:
    a = load_config(write_config(tmp_path, two_bots_toml() + "rounds = 1\n", "a.toml"))
    b = load_config(
        write_config(tmp_path, two_bots_toml() + "rounds = 4\nconcurrency = 1\n", "b.toml")
    )
    c = load_config(write_config(tmp_path, two_bots_toml() + "seed = 9\n", "c.toml"))
    names = ["x", "y"]
    assert a.fingerprint(names) == b.fingerprint(names) != c.fingerprint(names)


BAD = [
    ("rounds = 0", "'rounds'", "at least 1"),
    ('rounds = "two"', "'rounds'", "expected an integer"),
    ("seed = 1.5", "'seed'", "expected an integer"),
    ("seed = -1", "'seed'", "at least 0"),
    ("seed = 9223372036854775808", "'seed'", "at most 9223372036854775807"),
    ('games = [{ name = "stripes", options = { size = 1000001 } }]', "'games[0].options'", "51"),
    ("concurrency = -1", "'concurrency'", "at least 0"),
    ("pin_cores = 1", "'pin_cores'", "true or false"),
    ('isolation = "vm"', "'isolation'", "process, docker"),
    ("roundz = 2", "'roundz'", "unknown key"),
    ('games = ["chess"]', "'games[0]'", "unknown game 'chess'"),
    ("games = []", "'games'", "non-empty list"),
    ('games = ["stripes", "stripes"]', "'games'", "listed twice"),
    ("games = [{ options = {} }]", "'games[0].name'", "missing"),
    ('games = [{ name = "stripes", colour = 1 }]', "'games[0].colour'", "unknown key"),
    ('games = [{ name = "wrigglers", options = { size = 4 } }]', "'games[0].options'", "size"),
    ('games = [{ name = "wrigglers", options = { sise = 9 } }]', "'games[0].options'", "sise"),
    ('time_control = "fast"', "'time_control'", "BASE+INCREMENT"),
    ("time_control = { base = -1 }", "'time_control.base'", "greater than 0"),
    ("time_control = { increment = 1 }", "'time_control.increment'", "needs time_control.base"),
    ("time_control = { speed = 1 }", "'time_control.speed'", "unknown key"),
    ("time_control = { base = 1e300 }", "'time_control.base'", "base must be at most 604800 s"),
    ('time_control = "5+1e300"', "'time_control'", "increment must be at most 604800 s"),
    ('clock = "gpu"', "'clock'", "expected one of wall, cpu"),
    ('time_control = { base = 5, clock = "cpu" }\nclock = "cpu"', "'clock'", "set in time_control"),
    ("time_control = { base = 5, clock = 1 }", "'time_control.clock'", "expected one of"),
    ("time_control = { base = 5, wall_cap = 0.5 }", "'time_control.wall_cap'", "wall_cap must be"),
    ("time_control = { base = 5, bank = 1 }", "'time_control.bank'", "without a Fischer clock"),
    ("time_control = { move_time = 1, bank = -1 }", "'time_control.bank'", "at least 0"),
    ('time_control = { move_time = 1, bank = "1" }', "'time_control.bank'", "expected a number"),
    ("time_control = { move_time = 1, first_move = 0 }", "'time_control.first_move'", "than 0"),
    ("time_control = { move_time = 1, first_move = 0.5 }", "'time_control.first_move'", "least"),
    ("max_attempts = 0", "'max_attempts'", "at least 1"),
    ("rounds = 1000000000", "'rounds'", "at most 10000"),
    ("max_attempts = 1000000", "'max_attempts'", "at most 100"),
    ("openings = { turns = 1000000000 }", "'openings.turns'", "at most 100000"),
    ("openings = { turns = -1 }", "'openings.turns'", "at least 0"),
    ("openings = 3", "'openings'", "expected a table"),
    ("limits = { memory_mb = -5 }", "'limits.memory_mb'", "must be from 1 to 1048576, got -5"),
    ("limits = { processes = 0 }", "'limits.processes'", "must be from 1"),
    ('limits = { network = "yes" }', "'limits.network'", "true or false"),
    ("limits = { speed = 1 }", "'limits.speed'", "is not a limit"),
    ("limits = 3", "'limits'", "must be a table"),
]


@pytest.mark.parametrize(("line", "key", "problem"), BAD)
def test_bad_values(tmp_path: Path, line: str, key: str, problem: str) -> None:
    path = write_config(tmp_path, two_bots_toml() + line + "\n")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    msg = str(err.value)
    assert isinstance(err.value, ArenaError)
    assert "\n" not in msg
    assert msg.startswith(str(path))
    assert key in msg and problem in msg, msg


@pytest.mark.parametrize(
    ("text", "key", "problem"),
    [
        ("seed = 1\n", "'bots'", "missing"),
        ('bots = ["../nowhere"]\n', "'bots[0]'", "no bot manifest"),
        (f'bots = ["{BOTS / "random-py"}"]\n', "'bots'", "at least two bots"),
        (f'bots = ["{BOTS / "random-py"}", 3]\n', "'bots[1]'", "expected a manifest path"),
        (f'bots = ["{BOTS / "random-py"}", {{ name = "x" }}]\n', "'bots[1]'", "exactly one of"),
        (
            f'bots = [{{ path = "{BOTS / "random-py"}", name = "a" }}, '
            f'{{ path = "{BOTS / "random-c"}", name = "a" }}]\n',
            "'bots'",
            "duplicate bot name 'a'",
        ),
    ],
)
def test_bad_bots(tmp_path: Path, text: str, key: str, problem: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(write_config(tmp_path, text))
    assert key in str(err.value) and problem in str(err.value), str(err.value)


def test_not_toml_and_missing(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(write_config(tmp_path, "rounds = = 2\n"))
    with pytest.raises(ConfigError, match="no tournament config"):
        load_config(tmp_path / "absent.toml")
