"""League workers as separate hosts: each `arena league worker` runs in a network namespace of
its own, made by the test and joined to this machine by a veth pair on a bridge of a private
subnet (10.213.X.0/24, X free and chosen per run). From there a worker reaches this machine's
address on the bridge and nothing else: not this machine's loopback, not its other interfaces,
no route out. It is given nothing but the database URL at that address; it finds the server's
URL where the server published it (the server listens on the bridge's address only), downloads
the bots from it by content hash, plays and records the games. One worker is SIGKILLed mid-game
and started again in its namespace; afterwards the checks of test_workers.py: every game
recorded exactly once, none lost, the ratings equal a replay, no bot or slot process left.

Needs root (CAP_NET_ADMIN) and PostgreSQL listening beyond loopback, with pg_hba admitting the
subnet: .ci/setup-system configures both. Namespaces, the bridge and the veths are named with
a recognisable prefix and this process's id, removed in a finalizer, and those of a dead
earlier run are removed before a new one starts.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import sqlalchemy as sa

from . import test_workers
from .support import ADMIN_URL, ROOT, Server
from .test_workers import (
    STALLED_AFTER,
    Worker,
    check_every_game_once,
    finished,
    kill_mid_game,
    leftovers,
    live_jobs,
    q,
    wait_until,
)

pg_league = test_workers.pg_league  # the fixture: a PostgreSQL league of two random bots

#: names of what a run makes: namespaces `arena-lan-PID-I`, the bridge `arnb-PID`, the root
#: ends of the veths `arnv-PID-I` (interface names have at most 15 characters)
NETNS = re.compile(r"^arena-lan-(\d+)-\d+$")
LINK = re.compile(r"^arn[bv]-(\d+)(?:-\d+)?$")
SUBNETS = "10.213.{}.0/24"
#: written in a namespace, turns IPv6 off there (the namespace has IPv4 on its subnet only)
NO_IPV6 = "/proc/sys/net/ipv6/conf/all/disable_ipv6"


def ip(*args: str, check: bool = True) -> str:
    proc = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if check and proc.returncode != 0:
        raise AssertionError(f"ip {' '.join(args)}: {proc.stderr.strip()}")
    return proc.stdout


def netns_pids(ns: str) -> list[int]:
    return [int(p) for p in ip("netns", "pids", ns, check=False).split()]


def remove_netns(ns: str) -> None:
    """Kill what still runs in the namespace (a worker of a failed or killed run), then delete
    it; its veth pair goes with it."""
    for pid in netns_pids(ns):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    wait_until(lambda: not netns_pids(ns), f"the processes of namespace {ns} to exit", 30)
    ip("netns", "del", ns, check=False)


def remove_stale() -> None:
    """Remove the namespaces and links of runs whose process is gone (or of this process,
    left by an earlier test whose finalizer could not finish)."""

    def stale(pid: str) -> bool:
        return int(pid) == os.getpid() or not Path(f"/proc/{pid}").exists()

    for line in ip("netns", "list").splitlines():
        name = line.split()[0] if line.split() else ""
        if (m := NETNS.match(name)) and stale(m.group(1)):
            remove_netns(name)
    for line in ip("-o", "link", "show").splitlines():
        name = line.split(":")[1].strip().split("@")[0]
        if (m := LINK.match(name)) and stale(m.group(1)):
            ip("link", "del", name, check=False)


@dataclass
class Lan:
    """A bridge on this machine at `gateway` and a namespace per host, at `hosts[ns]`."""

    subnet: ipaddress.IPv4Network
    gateway: str
    hosts: dict[str, str]

    def wrap(self, ns: str) -> list[str]:
        """The command prefix that runs a program in namespace `ns` (its network only: the
        worker keeps this machine's files and cgroups, as it would on a host of its own)."""
        return ["nsenter", f"--net=/run/netns/{ns}"]

    def python(self, ns: str, code: str, *args: str) -> str:
        proc = subprocess.run(
            [*self.wrap(ns), sys.executable, "-c", code, *args],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=ROOT,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout


def free_subnet() -> ipaddress.IPv4Network:
    """A 10.213.X.0/24 no interface of this machine is on, starting from this process's id."""
    used = {
        ipaddress.ip_interface(f).network
        for f in re.findall(r"inet (\S+)", ip("-o", "-4", "addr", "show"))
    }
    for i in range(256):
        net = ipaddress.IPv4Network(SUBNETS.format((os.getpid() + i) % 256))
        if not any(net.overlaps(u) for u in used):
            return net
    raise AssertionError("no free 10.213.X.0/24 subnet")


@contextlib.contextmanager
def private_lan(n: int) -> Iterator[Lan]:
    """A bridge and `n` namespaces on it, each with one veth and only its subnet's route (no
    IPv6, no default route); everything removed on exit, whatever failed."""
    remove_stale()
    pid = os.getpid()
    subnet = free_subnet()
    addrs = [str(a) for a in subnet.hosts()]
    bridge = f"arnb-{pid}"
    lan = Lan(subnet, addrs[0], {})
    try:
        try:
            ip("link", "add", bridge, "type", "bridge")
        except AssertionError as e:
            if "Operation not permitted" in str(e):  # root in a container without NET_ADMIN
                pytest.skip(f"cannot make network devices here: {e}")
            raise
        ip("addr", "add", f"{lan.gateway}/{subnet.prefixlen}", "dev", bridge)
        ip("link", "set", bridge, "up")
        for i in range(n):
            ns, veth, addr = f"arena-lan-{pid}-{i}", f"arnv-{pid}-{i}", addrs[1 + i]
            ip("netns", "add", ns)
            lan.hosts[ns] = addr
            ip("link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns)
            ip("link", "set", veth, "master", bridge, "up")
            subprocess.run(
                [*lan.wrap(ns), "sh", "-c", f"[ ! -e {NO_IPV6} ] || echo 1 >{NO_IPV6}"],
                check=True,
                timeout=30,
            )
            ip("-n", ns, "addr", "add", f"{addr}/{subnet.prefixlen}", "dev", "eth0")
            ip("-n", ns, "link", "set", "eth0", "up")
            ip("-n", ns, "link", "set", "lo", "up")
        yield lan
    finally:
        for ns in lan.hosts:
            remove_netns(ns)
        for i in range(n):
            ip("link", "del", f"arnv-{pid}-{i}", check=False)  # gone with its namespace
        ip("link", "del", bridge, check=False)


#: run in a namespace: for each HOST:PORT, "ok" if a TCP connection is accepted, else the error
PROBE = """
import errno, json, socket, sys
out = {}
for target in sys.argv[1:]:
    host, port = target.rsplit(":", 1)
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
        out[target] = "ok"
    except OSError as e:
        out[target] = errno.errorcode.get(e.errno, str(e))
print(json.dumps(out))
"""


#: run in a namespace: "ok" if PostgreSQL at the URL accepts the login, else why not
LOGIN = """
import sys
import sqlalchemy as sa
engine = sa.create_engine(sys.argv[1], connect_args={"connect_timeout": 10})
try:
    engine.connect().close()
    print("ok")
except sa.exc.OperationalError as e:
    print(str(e.orig).strip().splitlines()[-1])
"""


def reachable(lan: Lan, ns: str, targets: list[str]) -> dict[str, str]:
    return json.loads(lan.python(ns, PROBE, *targets))


def other_addresses(lan: Lan) -> list[str]:
    """This machine's IPv4 addresses but loopback and its own on the bridge."""
    found = re.findall(r"inet (\d+\.\d+\.\d+\.\d+)/", ip("-o", "-4", "addr", "show"))
    return [a for a in found if not a.startswith("127.") and a != lan.gateway]


def clients(engine: sa.Engine) -> set[str]:
    """The addresses the test database's sessions come from."""
    rows = q(
        engine,
        "SELECT DISTINCT host(client_addr) FROM pg_stat_activity "
        "WHERE datname = current_database() AND client_addr IS NOT NULL",
    )
    return {r[0] for r in rows}


def needs_root() -> None:
    if os.geteuid() != 0:
        pytest.skip("network namespaces and veth pairs need root (CAP_NET_ADMIN)")
    missing = [c for c in ("ip", "nsenter") if shutil.which(c) is None]
    if missing:
        pytest.skip(f"needs iproute2 and util-linux: missing {missing}")


def needs_root_and_local_postgres() -> None:
    needs_root()
    host = sa.engine.make_url(ADMIN_URL).host
    if host not in ("127.0.0.1", "localhost"):
        pytest.skip(f"the workers reach this machine's PostgreSQL only, not {host}")


@pytest.mark.slow
@pytest.mark.postgres
def test_workers_in_network_namespaces_need_only_the_database_and_the_server(pg_league, tmp_path):
    needs_root_and_local_postgres()
    d, url, engine = pg_league
    tag = uuid.uuid4().hex[:6]
    names = [f"na-{tag}", f"nb-{tag}"]
    with private_lan(2) as lan:
        spaces = list(lan.hosts)
        # the database as a worker on another host sees it: at this machine's address on the LAN
        remote_url = (
            sa.engine.make_url(url).set(host=lan.gateway).render_as_string(hide_password=False)
        )
        port = sa.engine.make_url(url).port or 5432
        database = f"{lan.gateway}:{port}"
        login = lan.python(spaces[0], LOGIN, remote_url).strip()
        if login != "ok":
            pytest.skip(
                f"PostgreSQL refuses a worker at {database} ({login}): .ci/setup-system makes "
                "it listen beyond loopback and admit the arena role from 10.213.0.0/16"
            )
        server = Server(
            d, "--no-local-games", "--stalled-after", STALLED_AFTER, "--listen", f"{lan.gateway}:0"
        )
        workers: dict[str, Worker] = {}

        def start(i: int) -> Worker:
            w = Worker(
                remote_url,
                names[i],
                tmp_path,
                tmp_path / f"{names[i]}.log",
                wrap=lan.wrap(spaces[i]),
            )
            workers[names[i]] = w
            return w

        try:
            server_port = server.url.rsplit(":", 1)[1]
            assert server.url == f"http://{lan.gateway}:{server_port}"
            # each host: its subnet's route and nothing else; this machine only at the gateway
            for ns in spaces:
                routes = ip("-n", ns, "-4", "route", "show").splitlines()
                assert [r.split()[0] for r in routes] == [str(lan.subnet)], routes
                assert ip("-n", ns, "-6", "route", "show").strip() == ""
                local = [f"127.0.0.1:{server_port}", f"127.0.0.1:{port}"]
                outside = [f"{a}:{server_port}" for a in other_addresses(lan)]
                got = reachable(
                    lan, ns, [f"{lan.gateway}:{server_port}", database, *local, *outside]
                )
                assert got == {
                    f"{lan.gateway}:{server_port}": "ok",
                    database: "ok",
                    **dict.fromkeys(local, "ECONNREFUSED"),  # the namespace's own loopback
                    **dict.fromkeys(outside, "ENETUNREACH"),
                }, got

            a = start(0)
            start(1)
            wait_until(lambda: finished(engine) >= 6, "the first games")
            lost, a = kill_mid_game(engine, a, lambda: start(0))
            wait_until(lambda: finished(engine) >= 20, "20 games", timeout=90)
            # the workers' database sessions come from their hosts' addresses on the LAN
            wait_until(
                lambda: clients(engine) >= set(lan.hosts.values()),
                "both workers' sessions in pg_stat_activity",
            )
            # with the server gone nothing new is queued: the workers drain what is
            server.stop()
            wait_until(lambda: live_jobs(engine) == 0, "the queue to drain")
            for w in workers.values():
                assert w.stop() == 0
            for ns in spaces:
                assert netns_pids(ns) == []
        finally:
            server.stop()
            for w in workers.values():
                w.stop()
    assert not leftovers(tmp_path, names), leftovers(tmp_path, names)

    # each worker logged the server's published URL and fetched both bots from it
    for n in names:
        log = (tmp_path / f"{n}.log").read_text(errors="replace")
        assert f"server {server.url}" in log, log
        assert len(list((tmp_path / f"cache-{n}" / "bots").glob("*/.arena-ready"))) == 2
    check_every_game_once(engine, lost, names[0], 20)
    attempts = {r[0] for r in q(engine, "SELECT DISTINCT worker FROM attempts")}
    assert attempts == set(names), attempts


def test_the_namespaces_and_links_of_a_dead_run_are_removed():
    """A run killed before its finalizer leaves its namespaces (with processes in them) and
    links; the next run removes them, and nothing of a live run."""
    needs_root_and_local_postgres()
    dead = subprocess.Popen(["true"])
    dead.wait()  # a pid no live run has
    ns, bridge = f"arena-lan-{dead.pid}-0", f"arnb-{dead.pid}"
    live = f"arena-lan-{os.getppid()}-0"  # pytest's parent: alive, so never stale
    ip("netns", "add", ns)
    ip("netns", "add", live)
    ip("link", "add", bridge, "type", "bridge")
    proc = subprocess.Popen(["nsenter", f"--net=/run/netns/{ns}", "sleep", "600"])
    try:
        wait_until(lambda: netns_pids(ns) == [proc.pid], "a process in the stale namespace")
        remove_stale()
        assert proc.wait(timeout=30) == -signal.SIGKILL
        assert ns not in ip("netns", "list") and live in ip("netns", "list")
        assert bridge not in ip("-o", "link", "show")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        ip("netns", "del", ns, check=False)
        ip("netns", "del", live, check=False)
        ip("link", "del", bridge, check=False)
