#!/usr/bin/env bash
# Runs the benchmark (bench/): installs what is missing (apt: redis-server, postgresql;
# the project venv plus matplotlib), builds release binaries, starts its own
# redis-server, valkey-server (the Valkey column), DynamoDB endpoint, PostgreSQL, two
# local stacks with the write-through off (reply cache 250 ms and off) and one as
# `infra/up.sh` serves it (the load run: 200 writes/s + 1,000 reads/s for 10 minutes,
# 1 minute with --quick) on free loopback ports, runs `bench`, draws the chart, and
# stops everything it started.
#
# Results: bench/results/latest.{json,md,png}. Arguments go to `bench`:
# `--players N` (default 1000000), `--quick`, `--out DIR`; `--cost-only`, `--joins-only` and
# `--matches-only` run one part alone (bench/src/main.rs).
#
# `--check`: the test command's proof that this script still starts what it starts: debug
# binaries (built, not release), every server and stack above, one request to each
# (`bench --check`), then everything stopped; nothing measured or written.
# `BENCH_BIN_DIR` takes the functions from another folder (the test command points it at
# an empty one to show that a stack that cannot start fails the run).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/scripts/common.sh"
check=false
for a in "$@"; do [ "$a" = --check ] && check=true; done
ensure_deps
cd "$ROOT"

pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }
if [ -z "$(pg_bin)" ]; then
  log "installing postgresql (apt)"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends postgresql >/dev/null
fi
PG_BIN="$(pg_bin)"
stamp="$VENV/.bench-requirements.sha"
want="$(sha256sum bench/requirements.txt | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  log "installing the chart's libraries into the venv (bench/requirements.txt)"
  "$VENV/bin/python" -m pip install -q -r bench/requirements.txt
  echo "$want" >"$stamp"
fi

if $check; then
  log "building debug binaries (functions and bench)"
  cargo build --locked --workspace --bins
  profile=debug
else
  log "building release binaries (functions and bench)"
  cargo build --release --locked --workspace --bins
  profile=release
fi
bin_dir="${BENCH_BIN_DIR:-$ROOT/target/$profile}"

with_workdir
chmod 755 "$work"

# PostgreSQL refuses to run as root; as root, run it as the package's postgres user.
as_pg() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
mkdir -p "$work/pg"
[ "$(id -u)" -ne 0 ] || chown postgres "$work/pg"

pg_port="$(free_port)"
start_backends
as_pg "$PG_BIN/initdb" -D "$work/pg/data" -U bench --auth=trust -E UTF8 >"$work/initdb.log"
# Tuned for a fair fight on this box: durability off (like Redis here), a 1 GiB cache.
as_pg "$PG_BIN/postgres" -D "$work/pg/data" -p "$pg_port" -k "$work/pg" \
  -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off \
  -c shared_buffers=1GB -c work_mem=256MB -c effective_cache_size=8GB -c max_wal_size=8GB \
  >"$work/postgres.log" 2>&1 &
pids+=($!)
wait_tcp 127.0.0.1 "$redis_port" 30
wait_tcp 127.0.0.1 "$dynamodb_port" 60
wait_tcp 127.0.0.1 "$pg_port" 60

# start_stack NAME PORT [ARG...]: a local stack of release binaries on PORT with its own
# table and key prefix, the extra arguments added, its log in $work/stack-NAME.log;
# returns once it is READY. Environment set on the call is the stack's configuration.
start_stack() {
  local name=$1 port=$2
  shift 2
  "$VENV/bin/python" infra/local/stack.py --table "$name-$port" --bin-dir "$bin_dir" \
    --port "$port" --social-port 0 --events-port 0 --events-ws-port 0 \
    --dynamodb-url "http://127.0.0.1:$dynamodb_port" --redis-url "redis://127.0.0.1:$redis_port" \
    --key-prefix "$name$port:" --api-key bench-key --run-dir "$work/stack-$name" "$@" \
    >"$work/stack-$name.log" 2>&1 &
  pids+=($!)
  wait_stack_ready "$work/stack-$name.log" "$!" || exit 1
}

# Two stacks for the freshness runs: write-through off (the stream alone carries each
# write), read limits off (the probe polls hard), AWS's poll interval.
poll=0.25
apis=""
for label_ttl in "cache 250 ms:250" "cache off:0"; do
  label="${label_ttl%%:*}"
  ttl="${label_ttl##*:}"
  port="$(free_port)"
  WRITE_THROUGH=false READS_PER_IP_PER_S=0 READS_PER_PLAYER_PER_S=0 READ_CACHE_TTL_MS="$ttl" \
    start_stack "fresh$ttl" "$port" --poll-interval "$poll" --redis-timeout-ms 50
  apis="${apis:+$apis,}$label=http://127.0.0.1:$port"
done

# The load run's stack: as infra/up.sh serves it (write-through on, reply cache on, eight
# processes per function, a 2 s throttle bound, 128 connections at once), its read rate
# limits off so every read reaches the index.
load_port="$(free_port)"
READS_PER_IP_PER_S=0 READS_PER_PLAYER_PER_S=0 start_stack load "$load_port" --workers 8 --max-queue-wait 2 \
  --max-connections 128

start_valkey
binaries=""
for dir in functions/*/; do
  name="$(basename "$dir")"
  binaries="${binaries:+$binaries,}$name=$bin_dir/$name"
done

export BENCH_REDIS_URL="redis://127.0.0.1:$redis_port"
export BENCH_VALKEY_URL="redis://127.0.0.1:$valkey_port"
export BENCH_LOAD_URL="http://127.0.0.1:$load_port"
export BENCH_LOAD_DIR="$work/stack-load"
export BENCH_BINARIES="$binaries"
export BENCH_DYNAMODB_URL="http://127.0.0.1:$dynamodb_port"
start_meter "$BENCH_DYNAMODB_URL"
export BENCH_METER_URL="http://127.0.0.1:$meter_port"
export BENCH_POSTGRES_URL="host=127.0.0.1 port=$pg_port user=bench dbname=postgres"
export BENCH_API_URLS="$apis"
export BENCH_API_KEY=bench-key
# Player reads carry a viewer's token, as the stacks' gateway requires (infra/local/idp.py).
BENCH_PLAYER_TOKEN="$("$VENV/bin/python" infra/local/idp.py bench-viewer --ttl 86400)"
export BENCH_PLAYER_TOKEN
export BENCH_POLL_INTERVAL_S="$poll"
export BENCH_COMMAND="infra/bench.sh${*:+ $*}"
export RUST_LOG=warn

if $check; then
  log "one request to each server and stack (bench --check)"
  "target/$profile/bench" --check
  log "the benchmark's servers and stacks all answered; stopping them"
  exit 0
fi
if [[ " $* " != *" --cost-only "* && " $* " != *" --joins-only "* && " $* " != *" --matches-only "* ]]; then
  # Cold starts (process start to the first Runtime API poll, 20 of each function, as
  # infra/release.sh measures the cargo-lambda bootstraps): the init target.
  log "init time of each release binary (infra/local/init_time.py)"
  "$VENV/bin/python" infra/local/init_time.py --bin-dir "$bin_dir" --runs 20 --out "$work/init.json"
  export BENCH_INIT_JSON="$work/init.json"
fi
log "running the benchmark"
target/release/bench "$@"
out="bench/results"
prev=""
for a in "$@"; do
  [ "$prev" = "--out" ] && out="$a"
  prev="$a"
done
if [[ " $* " == *" --cost-only "* ]]; then
  log "wrote $out/cost.json"
  exit 0
fi
if [[ " $* " == *" --joins-only "* ]]; then
  log "wrote $out/joins.json"
  exit 0
fi
if [[ " $* " == *" --matches-only "* ]]; then
  log "wrote $out/matches.json and matches.md"
  exit 0
fi
"$VENV/bin/python" bench/chart.py "$out/latest.json" "$out/latest.png"
log "wrote $out/latest.json, latest.md and latest.png"
