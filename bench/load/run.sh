#!/usr/bin/env bash
# Load benchmark of `portcullis serve`: 20 s of realistic /v1/decide calls
# with wrk, server memory sampled before and after. Not a test: a measurement.
#   bench/load/run.sh [seconds] [connections]
# Needs wrk (Debian package `wrk`) and a release build (built here).
set -euo pipefail
cd "$(dirname "$0")/../.."
secs="${1:-20}"
conns="${2:-16}"
. bench/load/common.sh
bin="$(portcullis_bin)"
root="$(mktemp -d)"
trap 'kill "$server" 2>/dev/null || true; rm -rf "$root"' EXIT
mkdir -p "$root/work/.git" "$root/work/src" "$root/home"
export HOME="$root/home" PORTCULLIS_DATA_DIR="$root/data" PORTCULLIS_MANAGED_CONFIG="$root/none.toml"
port=$(free_port)
printf 'mode = "ask"\n[server]\naddr = "127.0.0.1:%s"\n' "$port" > "$root/config.toml"
export PORTCULLIS_CONFIG="$root/config.toml"
(cd "$root/work" && exec "$bin" serve >"$root/serve.log" 2>&1) &
server=$!
for _ in $(seq 100); do curl -fs "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
token=$("$bin" sessions register --id load-1 --agent claude-code --cwd "$root/work" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')
rss() { awk '/VmRSS/ {print $2 " kB"}' "/proc/$server/status"; }
# Warm up, then measure.
WORK="$root/work" SESSION=load-1 SESSION_TOKEN="$token" wrk -t1 -c"$conns" -d3s -s bench/load/decide.lua "http://127.0.0.1:$port" >/dev/null
echo "server RSS after warm-up: $(rss)"
WORK="$root/work" SESSION=load-1 SESSION_TOKEN="$token" wrk -t1 -c"$conns" -d"${secs}s" --latency -s bench/load/decide.lua "http://127.0.0.1:$port"
echo "server RSS after ${secs} s: $(rss)"
curl -fs "http://127.0.0.1:$port/metrics" | grep -E '^portcullis_decisions_total|^portcullis_decision_seconds_(sum|count)'
