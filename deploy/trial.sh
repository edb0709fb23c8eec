#!/usr/bin/env bash
# A real run of deploy/compose.yaml with no image registry: Debian root filesystems made here
# with debootstrap and imported as base images, the arena's image (the top-level Dockerfile) and
# the database's (deploy/db/Dockerfile) built on them from Debian's packages and the package
# index, the stack brought up with WORKERS workers, a user and three bots added through the
# server, then wait until GAMES games were played and recorded by the worker containers; the
# stack is taken down (volumes too) whatever happens, and the figures printed.
#
#   sudo deploy/trial.sh [GAMES [WORKERS]]        (defaults: 20 games, 2 workers)
#
# Needs root, a running dockerd, docker-compose (Debian's 1.29 or Compose v2) and debootstrap
# (.ci/setup-system installs them). The bases are kept in ARENA_TRIAL_CACHE
# (default /var/cache/arena-trial) and the images in Docker, so later runs skip debootstrap and
# reuse the build cache; ARENA_TRIAL_FRESH=1 makes the bases again, ARENA_TRIAL_NO_CACHE=1
# builds the images without Docker's cache. The base trusts the CA
# certificates this host added to its own store (/usr/local/share/ca-certificates), so pip
# inside the build reaches the package index the way the host does. The server is published on
# 127.0.0.1 only, on a port Docker picks.
set -euo pipefail

GAMES=${1:-20}
WORKERS=${2:-2}
HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${ARENA_TRIAL_CACHE:-/var/cache/arena-trial}
SUITE=bookworm
MIRROR=${ARENA_TRIAL_MIRROR:-http://deb.debian.org/debian}
BASE=arena-base:$SUITE
DB_BASE=arena-db-base:$SUITE
PROJECT=arena-trial
DEADLINE=${ARENA_TRIAL_TIMEOUT:-600}  # seconds the games may take

export ARENA_BASE=$BASE ARENA_DB_BASE=$DB_BASE ARENA_LISTEN=127.0.0.1: COMPOSE_PROJECT_NAME=$PROJECT
if command -v docker-compose >/dev/null; then
    compose=(docker-compose -f "$HERE/compose.yaml")
else
    compose=(docker compose -f "$HERE/compose.yaml")
fi

say() { printf 'trial: %s\n' "$*" >&2; }
die() { say "FAILED: $*"; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

[ "$(id -u)" = 0 ] || die "run as root (debootstrap, docker)"
for tool in docker debootstrap; do command -v $tool >/dev/null || die "no $tool (.ci/setup-system)"; done
docker info >/dev/null 2>&1 || die "no Docker engine answers"

t_all=$(now)

# 1. the base images: minimal Debians with what each Dockerfile would install from Debian (so
# that the build only installs the arena from the package index: the Dockerfiles' apt-get
# then finds everything there), ca-certificates and this host's own CAs. One tar per package
# list, kept in the cache; imported into Docker when missing.
make_base() {  # IMAGE PACKAGES...
    local image=$1; shift
    local packages
    packages=$(IFS=,; echo "ca-certificates,$*")
    local tar="$CACHE/${image%%:*}-$SUITE-$(echo "$packages" | sha256sum | cut -c1-12).tar"
    if [ "${ARENA_TRIAL_FRESH:-0}" = 1 ] || [ ! -s "$tar" ]; then
        mkdir -p "$CACHE"
        local rootfs
        rootfs=$(mktemp -d "$CACHE/rootfs.XXXXXX")
        say "debootstrap $SUITE with $packages"
        local log="$CACHE/debootstrap-${image%%:*}.log"
        debootstrap --variant=minbase --include="$packages" "$SUITE" "$rootfs" "$MIRROR" \
            >"$log" 2>&1 || { tail -n 20 "$log" >&2; rm -rf "$rootfs"; die "debootstrap"; }
        if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
            cp /usr/local/share/ca-certificates/*.crt "$rootfs/usr/local/share/ca-certificates/"
            chroot "$rootfs" update-ca-certificates >/dev/null 2>&1
        fi
        rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
        rm -f "$CACHE/${image%%:*}-$SUITE-"*.tar  # another package list's
        tar -C "$rootfs" -cf "$tar.tmp" . && mv "$tar.tmp" "$tar"
        rm -rf "$rootfs"
        docker image rm -f "$image" >/dev/null 2>&1 || true
    fi
    if [ "$(docker image inspect -f '{{index .Config.Labels "arena.base"}}' "$image" 2>/dev/null)" != "${tar##*/}" ]; then
        docker import -c "LABEL arena.base=${tar##*/}" "$tar" "$image" >/dev/null
    fi
}
t=$(now)
make_base "$BASE" python3 python3-pip gcc libc6-dev make util-linux nodejs &
arena_base=$!
make_base "$DB_BASE" postgresql &
db_base=$!
wait $arena_base || die "the base image $BASE"
wait $db_base || die "the base image $DB_BASE"
base_s=$(since "$t")
say "base images $BASE and $DB_BASE ready in ${base_s}s"

down() {
    say "taking the stack down"
    "${compose[@]}" down -v --remove-orphans >/dev/null 2>&1 || true
}
trap down EXIT
"${compose[@]}" down -v --remove-orphans >/dev/null 2>&1 || true  # a previous run's leftovers

# 2. the images (the worker's build is the server's, all cache)
t=$(now)
before=$(docker image inspect -f '{{.Id}}' arena arena-db 2>/dev/null || true)
build=(build)
[ "${ARENA_TRIAL_NO_CACHE:-0}" = 1 ] && build+=(--no-cache)
"${compose[@]}" "${build[@]}" >"$CACHE/build.log" 2>&1 || { tail -n 30 "$CACHE/build.log" >&2; die "build"; }
build_s=$(since "$t")
# the images this replaced, unless something still uses them
for id in $before; do
    docker image inspect -f '{{.RepoTags}}' "$id" 2>/dev/null | grep -q '^\[\]$' \
        && docker image rm "$id" >/dev/null 2>&1 || true
done
say "images built in ${build_s}s"

# 3. the stack; privileged containers if this Docker can start them, else the overlay that
# grants the sandbox what it needs one by one
if docker run --rm --privileged "$BASE" true >/dev/null 2>&1; then
    say "privileged containers start here: deploy/compose.yaml as it is"
else
    compose+=(-f "$HERE/unprivileged-docker.yaml")
    say "no privileged containers here: adding deploy/unprivileged-docker.yaml"
fi
t=$(now)
"${compose[@]}" up -d --scale worker="$WORKERS" >"$CACHE/up.log" 2>&1 || { cat "$CACHE/up.log" >&2; die "up"; }
port=$("${compose[@]}" port server 8000 | tail -n 1)
url="http://$port"
for _ in $(seq 1 240); do
    curl -sf "$url/api/v1" >/dev/null && break
    sleep 0.5
done
curl -sf "$url/api/v1" >/dev/null || { "${compose[@]}" logs --tail 40 server >&2; die "no server at $url"; }
up_s=$(since "$t")
say "stack up in ${up_s}s: server at $url (this host only), $WORKERS worker(s)"

arena() { "${compose[@]}" exec -T server arena "$@"; }
psql() { "${compose[@]}" exec -T db psql -h /run/postgresql -U arena -d league -qAt -c "$1"; }

{
    arena league user add alice --admin -C /league
    for bot in random-py random-c random-js; do
        arena league bot add "/opt/arena/bots/$bot" --owner alice -C /league
    done
} >"$CACHE/setup.log" 2>&1 || { cat "$CACHE/setup.log" >&2; die "adding the user and bots"; }
say "user alice and bots random-py, random-c, random-js added"

# 4. games: finished, their last attempt claimed by a worker container
played() {
    psql "SELECT count(*) FROM games g JOIN attempts a ON a.game_id = g.id AND a.attempt = g.attempt
          WHERE g.state = 'finished'"
}
t=$(now)
end=$(( $(date +%s) + DEADLINE ))
while n=$(played) && [ "$n" -lt "$GAMES" ]; do
    if [ "$(date +%s)" -gt "$end" ]; then
        "${compose[@]}" logs --tail 30 server worker >&2
        die "$n of $GAMES games in ${DEADLINE}s"
    fi
    sleep 1
done
games_s=$(since "$t")

# 5. the figures, the workers stopped first so that they hold still (SIGTERM: the games in play
# finish and are recorded)
"${compose[@]}" stop -t 60 worker >/dev/null 2>&1 || die "stopping the workers"
containers=$("${compose[@]}" ps -q worker | xargs docker inspect -f '{{.Config.Hostname}}' | sort)
by_worker=$(psql "SELECT a.worker, count(*) FROM games g JOIN attempts a ON a.game_id = g.id
                  AND a.attempt = g.attempt WHERE g.state = 'finished' GROUP BY a.worker ORDER BY 1")
total=$(psql "SELECT count(*) FROM games WHERE state = 'finished'")
failed=$(psql "SELECT count(*) FROM games WHERE state = 'failed'")
validated=$(psql "SELECT count(*) FROM versions WHERE state = 'active'")
restarts=$(docker inspect -f '{{.RestartCount}}' $("${compose[@]}" ps -q) | awk '{ s += $1 } END { print s + 0 }')
workers_api=$(curl -sf "$url/api/v1/workers")
echo "base image:     ${base_s}s"
echo "build:          ${build_s}s"
echo "stack up:       ${up_s}s"
echo "bots validated: $validated of 3 (on the server)"
echo "games:          $GAMES finished in ${games_s}s; $total once the workers stopped, $failed failed"
echo "worker containers (hostnames): $(echo "$containers" | paste -sd' ')"
echo "restarts:       $restarts"

# every game was played by a worker container of this stack, and every container played
while IFS='|' read -r name count; do
    host=${name%-*}  # worker names are HOST-PID
    grep -qx "$host" <<<"$containers" || die "games by $name, not one of the worker containers"
done <<<"$by_worker"
[ "$(wc -l <<<"$by_worker")" -eq "$WORKERS" ] || die "not every worker played: $by_worker"
[ "$failed" = 0 ] || die "$failed game(s) failed"
if [ "$restarts" != 0 ]; then
    for id in $("${compose[@]}" ps -q); do
        docker inspect -f '{{.Name}} restarted {{.RestartCount}} time(s)' "$id" >&2
        docker logs --tail 15 "$id" >&2
    done
    die "a container restarted ($restarts)"
fi
[ "$(awk -F'|' '{ s += $2 } END { print s }' <<<"$by_worker")" = "$total" ] \
    || die "games without a worker's attempt: $total finished, by worker: $by_worker"
# the API tells the same: each worker stopped (cleanly, by SIGTERM), with its games played
echo "games by worker (the database; /api/v1/workers):"
python3 - "$workers_api" "$by_worker" <<'PY' || die "/api/v1/workers: $workers_api"
import json, sys
api = {w["name"]: w for w in json.loads(sys.argv[1])["items"]}
for line in sys.argv[2].splitlines():
    name, count = line.split("|")
    w = api[name]
    assert w["state"] == "stopped" and w["played"] == int(count), w
    print(f"    {name}: {count}; {w['state']}, played {w['played']}, voided {w['voided']}")
PY
echo "whole run:      $(since "$t_all")s"
echo "trial: OK"
