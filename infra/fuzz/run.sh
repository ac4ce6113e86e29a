#!/usr/bin/env bash
# Fuzzes the API from its document: starts a local stack of its own (its own table and
# key prefix, on the servers infra/test.sh started: LB_TEST_REDIS_URL,
# LB_TEST_DYNAMODB_URL), gives it realistic data (fixtures.py), and runs Schemathesis
# with infra/fuzz/schemathesis.toml and infra/fuzz/hooks.py: every phase, every check;
# any finding fails.
# Arguments go to `schemathesis run` (e.g. --seed N to replay a run).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/common.sh"
cd "$ROOT"
with_workdir

port="$(free_port)"
key="fuzz-key"
# A window seals a second after it closes, so the fixtures can make a sealed one.
SEAL_SETTLE_SECONDS=1 "$VENV/bin/python" infra/local/stack.py --table "fuzz-$port" --key-prefix "fuzz$port:" \
  --port "$port" --social-port 0 --events-port 0 --events-ws-port 0 \
  --dynamodb-url "$LB_TEST_DYNAMODB_URL" --redis-url "$LB_TEST_REDIS_URL" \
  --api-key "$key" --bin-dir "${LB_TEST_BIN_DIR:-$ROOT/target/debug}" --run-dir "$work/run" \
  --workers 2 --check-openapi >"$work/stack.log" 2>&1 &
pids+=($!)
wait_stack_ready "$work/stack.log"

api="http://127.0.0.1:$port"
fixtures="$("$VENV/bin/python" infra/fuzz/fixtures.py "$api" "$key")"
eval "$fixtures"
export FUZZ_API_KEY="$key" FUZZ_BOARD FUZZ_GAME FUZZ_MODE FUZZ_TOKEN FUZZ_RANKS_CURSOR \
  FUZZ_BOARDS_CURSOR FUZZ_SEALED_BOARD FUZZ_SEASON_GAME FUZZ_TOURNAMENT FUZZ_RESET_BOARD \
  FUZZ_RESET_GAME
# The rules the document states only in words (infra/fuzz/hooks.py).
export PYTHONPATH="$ROOT/infra/fuzz${PYTHONPATH:+:$PYTHONPATH}" SCHEMATHESIS_HOOKS=hooks

# The whole session is kept for a failed run's reader: replay a case with
# `.venv/bin/schemathesis replay <id>` against a stack of your own.
status=0
"$VENV/bin/schemathesis" --no-color --config-file infra/fuzz/schemathesis.toml run openapi.yaml \
  --url "$api" "$@" >"$work/fuzz.log" 2>&1 || status=$?
grep -E '^(Test cases:|  [0-9]+ generated)' -A1 "$work/fuzz.log" | head -4 >&2 || true
if [ "$status" -ne 0 ]; then
  cat "$work/fuzz.log" >&2
  rm -rf target/fuzz-run && cp -r "$work/run" target/fuzz-run
  log "the fuzzer found what is above; the functions' logs are in target/fuzz-run"
  exit "$status"
fi
tail -3 "$work/fuzz.log" >&2
