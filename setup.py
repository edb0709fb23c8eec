"""Packaging beyond what pyproject.toml can say: two directories of the repository travel
inside the `arena` package, so that an installed arena (`pip install .`, the Dockerfile) has
them: the rules pages (`docs/games` as `arena._rules`, for `arena rules`) and the sparring bot
(`bots/random-py` as `arena._sparring`, for `arena check`). See arena/resources.py. The
files that are not Python inside the package (templates, static files, the migration
template) are listed too: a wheel carries only what is named."""

from setuptools import find_packages, setup

SHIPPED = {"arena._rules": "docs/games", "arena._sparring": "bots/random-py"}

setup(
    packages=[*find_packages(include=["arena*", "protocol*"]), *SHIPPED],
    package_dir=SHIPPED,
    package_data={
        "arena._rules": ["*.md"],
        "arena._sparring": ["bot.toml", "*.py"],
        "arena.viewer": ["static/*", "templates/*"],
        "arena.league.migrations": ["script.py.mako"],
    },
)
