#!/usr/bin/env bash
# Load benchmark of a team server: REPLICAS `portcullis serve` replicas on one
# throwaway PostgreSQL cluster, each driven by its own wrk (CONNS connections
# in all, split evenly) with the same realistic /v1/decide rotation as
# run.sh, for SECS seconds. Prints each replica's figures and the total.
# Not a test: a measurement.
#   bench/load/team.sh [seconds] [connections] [replicas]
#   PG_OPTIONS='-c synchronous_commit=off' bench/load/team.sh …   # an experiment
# Needs wrk (Debian package `wrk`), PostgreSQL's server binaries (Debian
# package `postgresql`) and a release build (built here). As root the cluster
# runs as the `postgres` user.
set -euo pipefail
cd "$(dirname "$0")/../.."
secs="${1:-20}"
conns="${2:-16}"
replicas="${3:-2}"
. bench/load/common.sh
bin="$(portcullis_bin)"
pgbin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)"
root="$(mktemp -d)"
pids=()
cleanup() {
  # KEEP_LOG: where to copy PostgreSQL's log (with PG_OPTIONS='-c log_statement=all').
  [ -n "${KEEP_LOG:-}" ] && cp "$root/pg/log" "$KEEP_LOG"
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  as_pg "$pgbin/pg_ctl" -D "$root/pg/data" -m fast stop >/dev/null 2>&1 || true
  rm -rf "$root"
}
trap cleanup EXIT
as_pg() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

mkdir -p "$root/pg" "$root/work/.git" "$root/work/src" "$root/home"
[ "$(id -u)" -eq 0 ] && chown postgres "$root" "$root/pg"
pgport=$(free_port)
as_pg "$pgbin/initdb" -D "$root/pg/data" -A trust -U portcullis -E UTF8 >/dev/null
# PG_OPTIONS: more server settings for an experiment (`-c synchronous_commit=off` …).
as_pg "$pgbin/pg_ctl" -D "$root/pg/data" -o "-p $pgport -k $root/pg -c max_connections=200 ${PG_OPTIONS:-}" \
  -l "$root/pg/log" start >/dev/null
as_pg "$pgbin/psql" -h "$root/pg" -p "$pgport" -U portcullis -d postgres -qc 'CREATE DATABASE portcullis'
url="postgres://portcullis@127.0.0.1:$pgport/portcullis"
"$bin" store migrate --store "$url"

export HOME="$root/home" PORTCULLIS_MANAGED_CONFIG="$root/none.toml"
ports=()
for r in $(seq "$replicas"); do
  port=$(free_port)
  mkdir -p "$root/r$r"
  printf 'mode = "ask"\n[server]\naddr = "127.0.0.1:%s"\n' "$port" > "$root/r$r/config.toml"
  (cd "$root/work" && PORTCULLIS_CONFIG="$root/r$r/config.toml" PORTCULLIS_DATA_DIR="$root/r$r/data" \
    exec "$bin" serve --store "$url" >"$root/r$r/serve.log" 2>&1) &
  pids+=($!)
  ports+=("$port")
done
for port in "${ports[@]}"; do
  for _ in $(seq 100); do curl -fs "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
done
# One session, registered through the first replica (the person's token).
admin=$(cat "$root/r1/data/ui-token")
token=$(curl -fs -X POST -H "Authorization: Bearer $admin" -H 'Content-Type: application/json' \
  -d "{\"id\":\"load-1\",\"agent\":\"claude-code\",\"cwd\":\"$root/work\"}" \
  "http://127.0.0.1:${ports[0]}/v1/sessions" | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')
each=$(( conns / replicas ))
drive() { # seconds, extra wrk args…; one wrk per replica at once
  local s="$1"; shift
  local wpids=()
  for i in "${!ports[@]}"; do
    WORK="$root/work" SESSION=load-1 SESSION_TOKEN="$token" \
      wrk -t1 -c"$each" -d"${s}s" "$@" -s bench/load/decide.lua "http://127.0.0.1:${ports[$i]}" \
      >"$root/wrk$i.txt" &
    wpids+=($!)
  done
  wait "${wpids[@]}"
}
drive 3 # warm-up
drive "$secs" --latency
total=0
for i in "${!ports[@]}"; do
  echo "== replica $((i + 1)) (port ${ports[$i]}, $each connections)"
  grep -E 'Requests/sec|99%|50%|Non-2xx|Socket errors' "$root/wrk$i.txt" || true
  rate=$(awk '/Requests\/sec/ {print $2}' "$root/wrk$i.txt")
  total=$(python3 -c "print(round($total + $rate))")
done
echo "== total: $total decisions/s over $replicas replicas on one PostgreSQL ($conns connections)"
