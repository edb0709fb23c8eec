"""league.toml: the file `arena league init` writes is valid and equals the defaults; every
bad key is one error naming the file and the key; relative paths follow the league directory."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from arena.league.settings import DEFAULT_TOML, LeagueSettings, load_settings, settings_from_dict
from arena.sandbox import Limits
from arena.tournaments.config import ConfigError


def test_the_default_file_is_the_defaults(tmp_path: Path):
    (tmp_path / "league.toml").write_text(DEFAULT_TOML.format(name="demo"))
    s = load_settings(tmp_path)
    d = LeagueSettings(root=tmp_path)
    assert s.name == "demo"
    assert (s.concurrency, s.isolation, s.max_attempts, s.time_control) == (
        d.concurrency,
        d.isolation,
        d.max_attempts,
        d.time_control,
    )
    assert s.limits == Limits(memory_mb=512, processes=32, open_files=128)
    assert [g.label for g in s.games] == [
        "papagra",
        "wrigglers",
        "stripes",
        "quadraphages",
        "hexaphage",
    ]
    assert s.matchmaking == d.matchmaking and s.submissions == d.submissions
    assert s.database_url == f"sqlite:///{tmp_path / 'league.sqlite'}"
    assert (s.host, s.port) == ("127.0.0.1", 8000)


def test_postgres_urls_pass_through(tmp_path: Path):
    url = "postgresql+psycopg://u:p@db:5432/league"
    assert settings_from_dict({"database": url}, root=tmp_path).database_url == url


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"database": "mysql://x"}, "database"),
        ({"listen": "localhost"}, "listen"),
        ({"listen": "h:99999"}, "listen"),
        ({"concurrency": 0}, "concurrency"),
        ({"isolation": "chroot"}, "isolation"),
        ({"games": ["chess"]}, "games[0]"),
        ({"time_control": "fast"}, "time_control"),
        ({"limits": {"memory_mb": "lots"}}, "limits.memory_mb"),
        ({"limits": {"gpus": 1}}, "limits.gpus"),
        ({"matchmaking": {"wide_window_chance": 2}}, "matchmaking.wide_window_chance"),
        ({"matchmaking": {"window": 0}}, "matchmaking.window"),
        ({"ratings": {"official_every": 0}}, "ratings.official_every"),
        ({"submissions": {"per_hour": -1}}, "submissions.per_hour"),
        ({"colour": "red"}, "colour"),
        ({"clock": "gpu"}, "clock"),
    ],
)
def test_bad_keys_are_named(tmp_path: Path, data, key):
    with pytest.raises(ConfigError, match="^" + re.escape(f"league.toml: key '{key}'")):
        settings_from_dict(data, root=tmp_path, where="league.toml")


def test_a_missing_league_says_how_to_create_one(tmp_path: Path):
    with pytest.raises(ConfigError, match="arena league init"):
        load_settings(tmp_path)


def test_the_clock_of_rated_games(tmp_path: Path):
    """clock = "cpu" beside the time control (issue 19); the default file says "wall"."""
    s = settings_from_dict({"time_control": "5+0.05", "clock": "cpu"}, root=tmp_path, where="x")
    assert (s.time_control.base, s.time_control.clock) == (5.0, "cpu")
    (tmp_path / "league.toml").write_text(DEFAULT_TOML.format(name="demo"))
    assert load_settings(tmp_path).time_control.clock == "wall"


def test_time_banks_in_the_ladder_and_validation_clocks(tmp_path: Path):
    """issue 22.5: the ladder's clock (which the bot keeps in games against people too) and the
    validation games' take a bank and a first-move time, with the tournament config's keys."""
    banked = {"move_time": 0.5, "bank": 3, "first_move": 2}
    data = {"time_control": banked, "clock": "cpu"}
    data["submissions"] = {"validation_time_control": banked}
    s = settings_from_dict(data, root=tmp_path, where="x")
    tc = s.time_control
    assert (tc.move_time, tc.bank, tc.first_move, tc.clock) == (0.5, 3.0, 2.0, "cpu")
    assert s.submissions.validation_time_control.bank == 3.0


@pytest.mark.parametrize(
    ("data", "key", "problem"),
    [
        ({"time_control": {"move_time": 1, "bank": -2}}, "time_control.bank", "at least 0"),
        ({"time_control": {"base": 5, "bank": 2}}, "time_control.bank", "Fischer"),
        (
            {"submissions": {"validation_time_control": {"move_time": 1, "first_move": 0.1}}},
            "validation_time_control.first_move",
            "at least move_time",
        ),
        # a person's clock is a Fischer clock: its base is their bank already
        ({"play": {"clock": {"base": 300, "bank": 30}}}, "clock.bank", "Fischer"),
    ],
)
def test_bad_time_banks_name_their_key(tmp_path: Path, data, key, problem):
    with pytest.raises(ConfigError) as err:
        settings_from_dict(data, root=tmp_path, where="league.toml")
    assert f"key '{key}'" in str(err.value) and problem in str(err.value), str(err.value)
