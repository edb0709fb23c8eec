#!/bin/sh
# First start: a cluster whose superuser is POSTGRES_USER (password POSTGRES_PASSWORD, required),
# a database POSTGRES_DB; password (scram) logins over TCP from POSTGRES_HOSTS (pg_hba.conf's
# address field: "all" by default, the compose network being the only way in unless the port is
# published: give the workers' subnet then), no password on the container's own socket. Every
# start: PostgreSQL in the foreground (exec: PID 1), stopped cleanly by `docker stop`'s SIGTERM.
set -eu
: "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD must be set}"
user=${POSTGRES_USER:-arena}
db=${POSTGRES_DB:-league}
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    pw=$(mktemp)
    printf '%s\n' "$POSTGRES_PASSWORD" >"$pw"
    initdb -D "$PGDATA" -U "$user" --pwfile="$pw" --auth-local=trust --auth-host=scram-sha-256 \
        --encoding=UTF8 --locale=C.UTF-8 >/dev/null
    rm -f "$pw"
    echo "host all all ${POSTGRES_HOSTS:-all} scram-sha-256" >>"$PGDATA/pg_hba.conf"
    pg_ctl -D "$PGDATA" -w -o "-c listen_addresses=''" start >/dev/null
    createdb -h /run/postgresql -U "$user" "$db"
    pg_ctl -D "$PGDATA" -w -m fast stop >/dev/null
    echo "arena-db: created the cluster, user $user, database $db"
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' -c unix_socket_directories=/run/postgresql
