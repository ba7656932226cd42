#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests (Debian's packages; scripts/setup.sh test
# installs them): `eval "$(scripts/postgres.sh start)"` starts one in a fresh directory on a
# free loopback port and prints the variables the storage tests read (and where the cluster
# lives); `scripts/postgres.sh stop` then stops that one and removes it. Each start makes its
# own cluster, so runs side by side never stop each other's. Trust authentication on
# 127.0.0.1 only, fsync off: test data.
set -euo pipefail
say() { echo "postgres.sh: $*" >&2; }


bin_dir() {
  local dir
  dir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
  [ -n "$dir" ] || { say "no PostgreSQL server (apt-get install postgresql)"; exit 1; }
  echo "$dir"
}

# Runs a server program as the cluster's owner: PostgreSQL refuses to run as root.
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

stop() {
  local STATE="${ATOMWORLD_POSTGRES_DIR:-}"
  [ -n "$STATE" ] && [ -d "$STATE" ] || return 0
  if [ -f "$STATE/data/postmaster.pid" ]; then
    as_owner "$(bin_dir)/pg_ctl" -D "$STATE/data" -m immediate stop >/dev/null 2>&1 || true
  fi
  rm -rf "$STATE"
}

start() {
  local bin port STATE
  bin="$(bin_dir)"
  STATE="$(mktemp -d "${TMPDIR:-/tmp}/atomworld-postgres-XXXXXX")"
  chmod 755 "$STATE"
  [ "$(id -u)" -ne 0 ] || chown postgres: "$STATE"
  as_owner "$bin/initdb" -D "$STATE/data" -U postgres -A trust -E UTF8 --no-sync >"$STATE/initdb.log" 2>&1 \
    || { cat "$STATE/initdb.log" >&2; exit 1; }
  port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  as_owner "$bin/pg_ctl" -D "$STATE/data" -l "$STATE/server.log" -w -t 60 \
    -o "-p $port -k $STATE -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300" \
    start >/dev/null || { cat "$STATE/server.log" >&2; exit 1; }
  say "PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port ($STATE)"
  echo "export ATOMWORLD_TEST_POSTGRES=postgres://postgres@127.0.0.1:$port/postgres"
  echo "export ATOMWORLD_REQUIRE_POSTGRES=1"
  echo "export ATOMWORLD_POSTGRES_DIR=$STATE"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
