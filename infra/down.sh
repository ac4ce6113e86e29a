#!/usr/bin/env bash
# Stops what infra/up.sh started (and nothing else): the processes named by the pid
# files in .local/run. Safe to run twice.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/scripts/common.sh"

shopt -s nullglob
stopped=0
# The stack first: it stops its own function processes on SIGTERM.
for pidfile in "$RUN_DIR"/stack.pid "$RUN_DIR"/dynamodb.pid "$RUN_DIR"/kafka.pid "$RUN_DIR"/redis.pid "$RUN_DIR"/cluster-*.pid; do
  name="$(basename "$pidfile" .pid)"
  [ -f "$pidfile" ] || continue
  pid="$(cat "$pidfile")"
  if kill -0 "$pid" 2>/dev/null; then
    log "stopping $name (pid $pid)"
    kill "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    stopped=$((stopped + 1))
  fi
  rm -f "$pidfile"
done
log "stopped $stopped process(es)"
