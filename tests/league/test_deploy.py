"""deploy/compose.yaml: every arena command in it is one the CLI accepts, the worker service
needs nothing but the database, and both roles run the top-level Dockerfile's image."""

from __future__ import annotations

import re
import shlex

import yaml
from support import ROOT

from arena.cli import build_parser

COMPOSE = ROOT / "deploy" / "compose.yaml"


def arena_commands(service: dict) -> list[list[str]]:
    command = service["command"]
    if service.get("entrypoint") == ["sh", "-c"]:
        out = []
        for part in re.split(r";|&&|\|\|", command[0]):
            argv = shlex.split(part)
            if argv and argv[0] == "exec":
                argv = argv[1:]
            if argv and argv[0] == "arena":
                out.append(argv[1:])
        return out
    return [command]


def test_compose_runs_a_server_and_workers_with_commands_the_cli_accepts():
    doc = yaml.safe_load(COMPOSE.read_text())
    services = doc["services"]
    assert {"db", "server", "worker"} <= set(services)
    parser = build_parser()
    server = [parser.parse_args(argv) for argv in arena_commands(services["server"])]
    assert [a.league_command for a in server] == ["init", "migrate", "serve"]
    assert server[-1].no_local_games
    (worker,) = [parser.parse_args(argv) for argv in arena_commands(services["worker"])]
    assert worker.league_command == "worker"
    assert worker.database.startswith("postgresql+psycopg://") and "@db:" in worker.database
    assert services["worker"]["image"] == services["server"]["image"]
    assert services["server"]["build"] == ".."
    assert 'ENTRYPOINT ["arena"]' in (ROOT / "Dockerfile").read_text()
