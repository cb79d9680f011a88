#!/usr/bin/env bash
# A PostgreSQL of the tests' own on 127.0.0.1:5433 (the portal's store is tested on it too).
#   postgres.sh start    init (once) and start it; create the `portal` role (safe to run again)
#   postgres.sh stop     stop it
#   postgres.sh url      print the SQLAlchemy URL the tests use
set -euo pipefail

STATE=${PORTAL_STATE:-/var/lib/portal-local}
DATA=$STATE/pg
PORT=${PORTAL_PG_PORT:-5433}
# Where it listens: this machine only; docker-compose.yml's `postgres` service listens for the
# hub's container too (PORTAL_PG_LISTEN=0.0.0.0), and makes the portal's own database.
LISTEN=${PORTAL_PG_LISTEN:-127.0.0.1}
DATABASE=${PORTAL_PG_DATABASE:-}
PASSWORD=${PORTAL_PG_PASSWORD:-portal-test}
# Empty where PostgreSQL is not installed (the demo's machine: `make stop` runs this too).
BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)

say() { printf '[postgres] %s\n' "$*"; }
as_pg() { runuser -u postgres -- "$@"; }

start() {
    [ -n "$BIN" ] || { echo "[postgres] PostgreSQL is not installed (install.sh --test does it)" >&2; exit 1; }
    mkdir -p "$STATE/run"
    if [ ! -f "$DATA/PG_VERSION" ]; then
        install -d -o postgres -g postgres -m 700 "$DATA"
        as_pg "$BIN/initdb" -D "$DATA" -U postgres --auth-local=trust --auth-host=scram-sha-256 -E UTF8 >/dev/null
        say "initialised $DATA"
    fi
    if [ "$LISTEN" != 127.0.0.1 ] && ! grep -q '^host all all 0.0.0.0/0' "$DATA/pg_hba.conf"; then
        echo "host all all 0.0.0.0/0 scram-sha-256" >>"$DATA/pg_hba.conf"
    fi
    chown postgres "$STATE/run"
    if ! as_pg "$BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
        as_pg "$BIN/pg_ctl" -D "$DATA" -l "$DATA/server.log" -w -t 60 \
            -o "-p $PORT -c listen_addresses=$LISTEN -k $STATE/run" start >/dev/null
        say "started on $LISTEN:$PORT"
    else
        say "already running on $LISTEN:$PORT"
    fi
    # CREATEDB: each test gets a fresh database of its own.
    as_pg psql -h "$STATE/run" -p "$PORT" -U postgres -qtA -v ON_ERROR_STOP=1 <<SQL >/dev/null
DO \$\$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'portal') THEN
    CREATE ROLE portal LOGIN CREATEDB PASSWORD '$PASSWORD';
  END IF;
END \$\$;
SQL
    if [ -n "$DATABASE" ] && ! as_pg psql -h "$STATE/run" -p "$PORT" -U postgres -qtAc \
        "SELECT 1 FROM pg_database WHERE datname = '$DATABASE'" | grep -q 1; then
        as_pg createdb -h "$STATE/run" -p "$PORT" -U postgres -O portal "$DATABASE"
        say "database $DATABASE"
    fi
}

stop() {
    if [ -n "$BIN" ] && [ -f "$DATA/PG_VERSION" ] && as_pg "$BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
        as_pg "$BIN/pg_ctl" -D "$DATA" -w -m fast stop >/dev/null
        say "stopped"
    fi
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    url) echo "postgresql+psycopg://portal:$PASSWORD@127.0.0.1:$PORT/postgres" ;;
    *) echo "usage: $0 start|stop|url" >&2; exit 2 ;;
esac
