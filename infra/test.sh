#!/usr/bin/env bash
# Runs every test of the project. Installs what is missing (apt: redis-server, openssl,
# chromium for the browser tests, nodejs and npm for the console's and the TypeScript
# client's builds, Mono for the C# client's, g++, CMake and the C++ client's libraries;
# the project venv: moto, cfn-lint, sam, cargo-lambda, the tansu Kafka broker), starts its
# own redis-server, 3-master Redis Cluster, three DynamoDB endpoints and a Kafka broker on free
# loopback ports (never the up
# stack's), checks the template, builds, runs the whole test suite and the API fuzzer
# (Schemathesis, in the venv), and stops what it started. Safe to run twice, and while infra/up.sh's stack is running. Extra arguments go to the test runner, e.g.
# `infra/test.sh faults --success-output immediate` to see the fault tests' figures.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/scripts/common.sh"
command -v cargo >/dev/null 2>&1 || { echo "cargo is required (https://rustup.rs)" >&2; exit 1; }
cd "$ROOT"
with_workdir

# The build needs none of the tools below: it runs while they install, the servers start
# and the checks run (on a fresh clone that hides two of its ten minutes).
log "building (functions and tests, linted by Clippy as they compile) in the background"
# Clippy's lints in the one build: clippy-driver compiles the workspace's own crates,
# as `cargo clippy` has it do, with every warning an error (CLIPPY_ARGS, split on
# __CLIPPY_HACKERY__, is how cargo-clippy passes `-D warnings` to it). A separate
# `cargo clippy` checked every dependency again and took 5 of the build's 13 minutes
# on a fresh clone. Exported, so the test runs below build nothing again.
RUSTC_WORKSPACE_WRAPPER="$(rustup which clippy-driver 2>/dev/null || command -v clippy-driver)"
export RUSTC_WORKSPACE_WRAPPER CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
# (The library's doc links are not checked here: `cargo doc` checks every dependency
# again, 2 minutes the run cannot spend within its 30; run
# `RUSTDOCFLAGS="-D warnings" cargo doc -p leaderboard --no-deps` after editing them.)
# Both tiers: the unit, use-case and handler tests and the e2e tier (`--test '*'` names
# the e2e target, which a plain `cargo test` leaves out: tests/Cargo.toml).
TIERS=(--workspace --locked --lib --bins --test '*')
setsid -w bash -c 'cargo build --workspace --locked --bins && cargo test --no-run "$@"' build "${TIERS[@]}" \
  >"$work/build.log" 2>&1 &
build_pid=$!
# Its own process group: a failed step below stops the whole build (with_workdir).
pids+=("-$build_pid")

ensure_deps
chromium_bin="$(ensure_browser)"
ensure_console
ensure_ts_client
ensure_csharp_client
ensure_cpp_client

start_backends

log "checking formatting, the template and the local-stack scripts"
cargo fmt --all -- --check
# The template as it deploys by default, with the operator console on, and as the small
# profile deploys it.
sed '/^  Console:$/,/Default:/ s/Default: "false"/Default: "true"/' template.yaml >"$work/console-on.yaml"
! cmp -s template.yaml "$work/console-on.yaml" || { echo "could not turn the console on" >&2; exit 1; }
sed '/^  Profile:$/,/Default:/ s/Default: standard/Default: small/' template.yaml >"$work/small.yaml"
! cmp -s template.yaml "$work/small.yaml" || { echo "could not pick the small profile" >&2; exit 1; }
for tpl in template.yaml "$work/console-on.yaml" "$work/small.yaml"; do
  cfn-lint "$tpl"
  # SAM's own checks offline: no account, no network (the region only names the partition).
  AWS_DEFAULT_REGION=us-east-1 SAM_CLI_TELEMETRY=0 sam validate --lint --template "$tpl"
done
# The SAM translator's full expansion (what CloudFormation would create), offline.
"$VENV/bin/python" infra/local/template_stats.py --summary template.yaml 2>/dev/null | tee "$work/template-stats"
"$VENV/bin/python" -m py_compile infra/local/*.py
# No tracker references in the prose, and docs/deploying.md carries the counts above.
"$VENV/bin/python" infra/scripts/check_prose.py "$ROOT" "$work/template-stats"
# docs/cost.md carries what infra/cost/floor.py computes from the template, its dated
# price table and the benchmark's measured units (the floor and a million results).
"$VENV/bin/python" infra/cost/floor.py --check docs/cost.md
(cd infra/cost && "$VENV/bin/python" -m unittest -q test_floor)
# The Unity package imports whole: a .meta with a GUID of its own beside every asset.
"$VENV/bin/python" infra/scripts/check_unity_package.py clients/csharp
(cd infra/scripts && "$VENV/bin/python" -m unittest -q test_checks)
# Every path README.md and docs/ name exists (links and backticked repository paths).
"$VENV/bin/python" infra/scripts/check_links.py "$ROOT"
(cd infra/local && "$VENV/bin/python" -m unittest -q test_stack test_meter test_elasticache_iam)

log "waiting for the build"
if ! wait "$build_pid"; then
  cat "$work/build.log" >&2
  log "the build failed: above"
  exit 1
fi
tail -1 "$work/build.log" >&2

wait_tcp 127.0.0.1 "$redis_port" 30
wait_tcp 127.0.0.1 "$dynamodb_port" 60
wait_tcp 127.0.0.1 "$dynamodb_port2" 60
wait_tcp 127.0.0.1 "$dynamodb_port3" 60
wait_tcp 127.0.0.1 "$kafka_port" 30
export LB_TEST_REDIS_URL="redis://127.0.0.1:$redis_port"
export LB_TEST_REDIS_CLUSTER_URL="redis+cluster://127.0.0.1:${cluster_ports[0]},127.0.0.1:${cluster_ports[1]},127.0.0.1:${cluster_ports[2]}"
export LB_TEST_DYNAMODB_URL="http://127.0.0.1:$dynamodb_port"
export LB_TEST_DYNAMODB_URLS="$LB_TEST_DYNAMODB_URL,http://127.0.0.1:$dynamodb_port2,http://127.0.0.1:$dynamodb_port3"
export LB_TEST_KAFKA="127.0.0.1:$kafka_port"
export LB_TEST_PYTHON="$VENV/bin/python"
export LB_TEST_BIN_DIR="$ROOT/target/debug"
export LB_TEST_CHROMIUM="$chromium_bin"
# The run's players' token key: every stack a test starts signs with it, and the tests
# sign their own tokens (expired, foreign audience, ...) with it too.
export LB_TEST_JWT_KEY="$work/idp-key.pem"
LB_TEST_JWT_KID="$("$VENV/bin/python" infra/local/idp.py --keygen --key "$LB_TEST_JWT_KEY")"
export LB_TEST_JWT_KID

# Every event the tests drain from the stack's bus is kept here, then checked against
# its schema (docs/events); a whole run must meet every documented event type.
export LB_TEST_EVENTS_DIR="$work/events"
log "running the tests (redis :$redis_port, cluster :${cluster_ports[*]}, DynamoDB :$dynamodb_port :$dynamodb_port2 :$dynamodb_port3, Kafka :$kafka_port)"
if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run "${TIERS[@]}" --no-fail-fast "$@"
else
  cargo test "${TIERS[@]}" --no-fail-fast "$@"
fi
mkdir -p "$LB_TEST_EVENTS_DIR"
"$VENV/bin/python" infra/scripts/check_events.py docs/events "$LB_TEST_EVENTS_DIR" $([ $# -eq 0 ] && echo --every-type)

# The Redis adapter's scenarios (every index call, the hot-spot paths) again on Valkey,
# single node and cluster, the server the template deploys by default. Skipped when a
# test filter was given.
if [ $# -eq 0 ]; then
  start_valkey
  log "the Redis adapter's scenarios on Valkey ($("$(valkey_server)" --version | cut -d' ' -f3))"
  export LB_TEST_REDIS_URL="redis://127.0.0.1:$valkey_port"
  export LB_TEST_REDIS_CLUSTER_URL="redis+cluster://127.0.0.1:${valkey_cluster_ports[0]},127.0.0.1:${valkey_cluster_ports[1]},127.0.0.1:${valkey_cluster_ports[2]}"
  if cargo nextest --version >/dev/null 2>&1; then
    cargo nextest run --workspace --locked --test e2e --no-fail-fast -E 'test(/^index::/) | test(/^hot::/)'
  else
    cargo test --workspace --locked --test e2e --no-fail-fast -- index:: hot::
  fi
  export LB_TEST_REDIS_URL="redis://127.0.0.1:$redis_port"

  # The single-node scenarios again as the small profile connects: IAM tokens the
  # stand-in checks with botocore (infra/local/elasticache_iam.py), in front of a server
  # whose password only the stand-in and the scenarios' raw inspections know.
  log "the Redis adapter's single-node scenarios with IAM tokens (the small profile)"
  iam_redis_port="$(free_port)"
  iam_proxy_port="$(free_port)"
  iam_password="iam-$RANDOM$RANDOM"
  redis-server --port "$iam_redis_port" --bind 127.0.0.1 --save "" --appendonly no \
    --requirepass "$iam_password" --dir "$work" >"$work/iam-redis.log" 2>&1 &
  pids+=($!)
  wait_tcp 127.0.0.1 "$iam_redis_port" 30
  "$VENV/bin/python" infra/local/elasticache_iam.py --listen "$iam_proxy_port" \
    --upstream "$iam_redis_port" --password "$iam_password" --cache lb-small \
    --region us-east-1 --key AKIALOCALIAMCACHE000=local-iam-cache-secret --serverless \
    >"$work/iam-proxy.log" 2>&1 &
  pids+=($!)
  wait_tcp 127.0.0.1 "$iam_proxy_port" 30
  (
    export LB_TEST_REDIS_URL="redis://127.0.0.1:$iam_proxy_port"
    export LB_TEST_REDIS_RAW_URL="redis://:$iam_password@127.0.0.1:$iam_redis_port"
    export LB_TEST_REDIS_IAM="lb-small:AKIALOCALIAMCACHE000:local-iam-cache-secret"
    if cargo nextest --version >/dev/null 2>&1; then
      cargo nextest run --workspace --locked --test e2e --no-fail-fast -E 'test(/^index::.*::single$/)'
    else
      cargo test --workspace --locked --test e2e --no-fail-fast -- index:: --skip cluster
    fi
  )
  grep -q '"refused": null' "$work/iam-proxy.log" || { echo "the IAM stand-in accepted no token" >&2; exit 1; }
fi

# The API fuzzed from its document (infra/fuzz/run.sh, about two minutes): any finding
# fails the run. A fixed seed by default, so a run is repeatable; FUZZ_SEED=random draws
# one (printed, to replay). Beside it, on a DynamoDB endpoint of its own, the benchmark
# harness still runs end to end (a few rounds of every Redis path on a small board;
# infra/bench.sh is the real run): a smoke run checks what it records, not how fast, so
# it can share the machine; then `infra/bench.sh --check` starts every server and stack
# the benchmark starts and sends each a request. Skipped when a test filter was given.
if [ $# -eq 0 ]; then
  log "benchmark smoke run, beside the fuzzer"
  bench_dynamodb="http://127.0.0.1:$dynamodb_port3"
  start_meter "$bench_dynamodb"
  (
    BENCH_REDIS_URL="$LB_TEST_REDIS_URL" BENCH_DYNAMODB_URL="$bench_dynamodb" \
      BENCH_METER_URL="http://127.0.0.1:$meter_port" target/debug/bench --players 5000 --smoke --out "$work/bench" \
      >"$work/bench.log" 2>&1 &&
      grep -q '"rank_p99_vs_bare"' "$work/bench/latest.json" &&
      grep -q '"family_6_first"' "$work/bench/latest.json" &&
      grep -q '"league_settle_per_1000_members"' "$work/bench/latest.json" &&
      grep -q '"joins_vs_floor"' "$work/bench/latest.json" &&
      grep -q '"p99_vs_integers"' "$work/bench/latest.json" &&
      # The benchmark script still starts every server and stack it starts (each answers
      # one request), and a stack that cannot start fails it (here: no binaries).
      infra/bench.sh --check >"$work/bench-check.log" 2>&1 &&
      mkdir -p "$work/no-binaries" &&
      ! BENCH_BIN_DIR="$work/no-binaries" infra/bench.sh --check >"$work/bench-check-broken.log" 2>&1 &&
      grep -q "did not start" "$work/bench-check-broken.log"
  ) &
  bench_pid=$!
  pids+=("$bench_pid")
  log "fuzzing the API from openapi.yaml (Schemathesis)"
  seed="${FUZZ_SEED:-20261124}"
  if [ "$seed" = random ]; then infra/fuzz/run.sh; else infra/fuzz/run.sh --seed "$seed"; fi
  if ! wait "$bench_pid"; then
    cat "$work/bench.log" "$work/bench-check.log" "$work/bench-check-broken.log" >&2 2>/dev/null || true
    log "the benchmark smoke run or the check of infra/bench.sh failed: above"
    exit 1
  fi
  log "benchmark smoke run and infra/bench.sh --check done"
fi
