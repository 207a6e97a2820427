#!/usr/bin/env bash
# The servers the tests talk to, from Debian's packages, for tests only:
#   PostgreSQL on 127.0.0.1:5432, user postgres, no password;  Redis on 127.0.0.1:6379.
#
# Debian's own cluster (15/main) asks for a password over TCP (scram-sha-256), and rightly so.
# Rather than trusting password-less logins there, the tests get a PostgreSQL of their own: a
# data directory made with initdb under /var/lib/postgresql/quota-ledger-test, listening on
# 127.0.0.1 only, that trusts the user postgres from 127.0.0.1 and nothing else. Debian's cluster
# and its pg_hba.conf are never touched. Safe to run again and again: what runs is left running.
# Usage: test/support/services.sh [start|stop]
set -euo pipefail

PG_PORT=5432
REDIS_PORT=6379
TEST_PGDATA=/var/lib/postgresql/quota-ledger-test

apt_install() {
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"
  else
    echo "missing $*, and cannot install it here (needs root and apt-get)" >&2
    return 1
  fi
}

as_postgres() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

pg_bin() { echo "/usr/lib/postgresql/$(ls /usr/lib/postgresql | sort -V | tail -1)/bin"; }

pg_accepts_tests() { psql "postgres://postgres@127.0.0.1:$PG_PORT/postgres" -Atqc 'select 1' >/dev/null 2>&1; }

start_postgres() {
  if [ ! -d /usr/lib/postgresql ] || ! command -v psql >/dev/null; then apt_install postgresql; fi
  if pg_accepts_tests; then echo "PostgreSQL: 127.0.0.1:$PG_PORT already takes the tests' login"; return; fi
  if pg_isready -h 127.0.0.1 -p "$PG_PORT" -q; then
    echo "PostgreSQL on 127.0.0.1:$PG_PORT asks the user postgres for a password (Debian's own cluster?)." >&2
    echo "Stop it (pg_ctlcluster <version> main stop) so the tests' own server can take the port," >&2
    echo "or point the tests elsewhere with TEST_DATABASE_ADMIN_URL." >&2
    return 1
  fi
  local bin; bin=$(pg_bin)
  if [ ! -f "$TEST_PGDATA/PG_VERSION" ]; then
    install -d -o postgres -g postgres -m 0700 "$TEST_PGDATA"
    as_postgres "$bin/initdb" -D "$TEST_PGDATA" -U postgres --auth-local=peer --auth-host=reject \
      --encoding=UTF8 --locale=C.UTF-8 >/dev/null
    # Only the tests' login: postgres from the loopback address, for databases and replication.
    cat >"$TEST_PGDATA/pg_hba.conf" <<'HBA'
# quota-ledger tests only (test/support/services.sh): never a product default
local all         all                     peer
host  all         postgres  127.0.0.1/32  trust
host  replication postgres  127.0.0.1/32  trust
HBA
    cat >>"$TEST_PGDATA/postgresql.conf" <<CONF
# quota-ledger tests
listen_addresses = '127.0.0.1'
port = $PG_PORT
max_connections = 300
unix_socket_directories = '/var/run/postgresql'
wal_level = replica
max_wal_senders = 10
CONF
  fi
  install -d -o postgres -g postgres -m 2775 /var/run/postgresql
  as_postgres "$bin/pg_ctl" -D "$TEST_PGDATA" -l "$TEST_PGDATA/server.log" -w -t 60 start >/dev/null
  for _ in $(seq 1 30); do pg_accepts_tests && break; sleep 1; done
  pg_accepts_tests || { tail -20 "$TEST_PGDATA/server.log" >&2; return 1; }
  echo "PostgreSQL: the tests' own server in $TEST_PGDATA on 127.0.0.1:$PG_PORT"
}

start_redis() {
  if ! command -v redis-server >/dev/null; then apt_install redis-server; fi
  if ! redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping >/dev/null 2>&1; then
    redis-server --daemonize yes --bind 127.0.0.1 --port "$REDIS_PORT" --save "" --appendonly no >/dev/null
  fi
  for _ in $(seq 1 30); do redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 1; done
  redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping >/dev/null
  echo "Redis: 127.0.0.1:$REDIS_PORT"
}

stop_all() {
  if [ -f "$TEST_PGDATA/postmaster.pid" ]; then as_postgres "$(pg_bin)/pg_ctl" -D "$TEST_PGDATA" -m fast stop || true; fi
  redis-cli -h 127.0.0.1 -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true
}

case "${1:-start}" in
  start) start_postgres; start_redis ;;
  stop) stop_all ;;
  *) echo "usage: $0 [start|stop]" >&2; exit 2 ;;
esac
