"""Packaging beyond what pyproject.toml can say: two directories of the repository travel
inside the `arena` package, so that an installed arena (`pip install .`, the Dockerfile) has
them: the rules pages (`docs/games` as `arena._rules`, for `arena rules`) and the sparring bot
(`bots/random-py` as `arena._sparring`, for `arena check`), and the starter kits
(`protocol/kits` as `arena._kits`, for `arena new`). See arena/resources.py. The
files that are not Python inside the package (templates, static files, the migration
template, the protocol's JSON Schema and test vectors) are listed too: a wheel carries only what
is named."""

from setuptools import find_packages, setup

SHIPPED = {
    "arena._rules": "docs/games",
    "arena._sparring": "bots/random-py",
    "arena._kits": "protocol/kits",
}
#: each kit's files (a glob's `*` skips dot files: the .gitignore is named); never a build's
#: products, which a kit directory of the checkout does not hold (tests build copies)
KIT_FILES = ["*/*.*", "*/.gitignore", "*/src/*", "*/bot.toml"]

setup(
    packages=[*find_packages(include=["arena*", "protocol*"]), *SHIPPED],
    package_dir=SHIPPED,
    package_data={
        "arena._rules": ["*.md"],
        "arena._sparring": ["bot.toml", "*.py"],
        "arena._kits": KIT_FILES,
        "arena.viewer": ["static/*", "templates/*"],
        "arena.league.migrations": ["script.py.mako"],
        # the protocol's JSON Schema and the rules' test vectors (docs/vectors.md)
        "protocol": ["schema/*.json"],
        "protocol.vectors": ["*.json"],
    },
)
