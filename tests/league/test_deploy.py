"""deploy/compose.yaml: every arena command in it is one the CLI accepts, the worker service
needs nothing but the database, both roles run the top-level Dockerfile's image and build it,
no service needs an image registry with the local base deploy/trial.sh makes, the server is
published on this host only unless told otherwise, and every service restarts. And the stack
run for real by deploy/trial.sh (slow): Debian bases made with debootstrap, the images built on
them, the stack up, games played and recorded by the worker containers."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess

import pytest
import yaml

from arena.cli import build_parser
from arena.sandbox.docker import docker_available

from .support import ROOT

COMPOSE = ROOT / "deploy" / "compose.yaml"
REMOTE = ROOT / "deploy" / "remote-workers.yaml"


def defaults(value: str) -> str:
    """A Compose value with each ${NAME:-default} at its default, as with no environment."""
    return re.sub(r"\$\{\w+:-([^}]*)\}", r"\1", value)


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
    # each builds the image (some Compose versions pull an image no service of theirs builds)
    assert services["worker"]["build"] == services["server"]["build"]
    assert services["server"]["build"]["context"] == ".."
    assert 'ENTRYPOINT ["arena"]' in (ROOT / "Dockerfile").read_text()


def test_no_service_needs_an_image_registry_given_a_local_base():
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    for name, service in services.items():
        assert "build" in service, f"{name}: an image that only a registry has"
        build = service["build"]
        context = (COMPOSE.parent / build["context"]).resolve()
        dockerfile = (context / "Dockerfile").read_text()
        # the base is a build argument the operator sets (ARENA_BASE, ARENA_DB_BASE)
        assert re.search(r"^ARG BASE=", dockerfile, re.M) and "FROM ${BASE}" in dockerfile
        assert re.fullmatch(r"\$\{ARENA_\w*BASE:-[^}]+\}", build["args"]["BASE"]), name
    # one arena Dockerfile, at the repository root
    assert services["server"]["build"]["context"] == ".."


def test_the_server_is_published_on_this_host_only_and_everything_restarts():
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    (port,) = services["server"]["ports"]
    assert defaults(port) == "127.0.0.1:8000:8000"
    assert "ARENA_LISTEN" in port
    assert "ports" not in services["db"]  # only deploy/remote-workers.yaml publishes it
    for name, service in services.items():
        assert service.get("restart") == "unless-stopped", name
    # workers start once the server serves (the schema and the job queue in place): none is
    # restarted in a loop while the server migrates
    assert services["worker"]["depends_on"] == {"server": {"condition": "service_healthy"}}
    assert "healthcheck" in services["server"]
    # validation and /play games run on the server even with --no-local-games: it confines
    # bots like the workers
    assert services["server"]["privileged"] is True and services["worker"]["privileged"] is True


def test_remote_workers_overlay_publishes_the_database_where_told():
    (port,) = yaml.safe_load(REMOTE.read_text())["services"]["db"]["ports"]
    assert port.startswith("${ARENA_DB_LISTEN:?")  # no default: the operator names the address
    header = COMPOSE.read_text()
    for var in ("ARENA_PUBLIC_URL", "ARENA_DB_LISTEN", "ARENA_DB_HOSTS", "ARENA_LISTEN"):
        assert var in header
    server = yaml.safe_load(COMPOSE.read_text())["services"]["server"]
    assert "$$ARENA_PUBLIC_URL" in server["command"][0]
    assert defaults(server["environment"]["ARENA_PUBLIC_URL"]) == "http://server:8000"
    assert os.access(ROOT / "deploy" / "trial.sh", os.X_OK)


@pytest.mark.trial
@pytest.mark.slow
@pytest.mark.docker
@pytest.mark.timeout(2400)
def test_trial_plays_games_on_worker_containers_built_without_a_registry():
    # deploy/trial.sh for real: Debian bases made with debootstrap (kept in its cache), both
    # images built on them, the stack up, a user and three bots added through the server, games
    # played and recorded by the worker containers, the stack taken down. About 2 minutes with
    # the bases cached and 45 s with the images too; 6 to 7 minutes on a machine without either.
    missing = [t for t in ("docker", "debootstrap", "curl") if shutil.which(t) is None]
    if not shutil.which("docker-compose") and shutil.which("docker"):
        probe = subprocess.run(["docker", "compose", "version"], capture_output=True)
        if probe.returncode != 0:
            missing.append("docker-compose")
    if missing or os.geteuid() != 0:
        pytest.skip(f"deploy/trial.sh needs root and {missing or 'nothing else'}")
    if docker_available() is not None:
        pytest.skip(f"no Docker engine: {docker_available()}")
    trial = subprocess.run(
        [str(ROOT / "deploy" / "trial.sh"), "6", "2"],
        capture_output=True,
        text=True,
        timeout=2300,
        stdin=subprocess.DEVNULL,
    )
    out = trial.stdout + trial.stderr
    print(out)  # the figures, in the test's report
    assert trial.returncode == 0, out[-4000:]
    assert "trial: OK" in trial.stdout
    # two workers, each a container of the stack, each with games played and recorded
    played = re.findall(r"^    (\w+)-\d+: (\d+); stopped, played \2", trial.stdout, re.M)
    assert len(played) == 2 and all(int(n) > 0 for _, n in played), trial.stdout
