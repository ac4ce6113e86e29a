#!/usr/bin/env bash
# Brings the whole local stack up and serves the API on loopback (docs/local-stack.md):
#   redis-server        127.0.0.1:6379
#   Redis Cluster       127.0.0.1:7001-7003 (3 masters; the API uses it with LB_REDIS=cluster)
#   DynamoDB + Streams  http://127.0.0.1:8000  (moto, infra/local/dynamodb_server.py;
#                       also SQS, EventBridge, Kinesis and S3, the exports' bucket)
#   Kafka               127.0.0.1:9092  (tansu, in memory; topics LB_KAFKA_TOPICS)
#   the API             http://127.0.0.1:${LB_PORT:-3000}  (API Gateway shim + functions
#                       + stream mapping, infra/local/stack.py)
#   social graph        http://127.0.0.1:3001  (stand-in: GET/PUT /players/{p}/friends)
#   events API          http://127.0.0.1:3002 (publish, demo page /demo/) and
#                       ws://127.0.0.1:3003/event/realtime (AppSync Events stand-in)
#   operator console    http://127.0.0.1:${LB_CONSOLE_PORT:-3004} (infra/console, the local key)
# Installs what is missing, builds the functions, starts what is not running yet, creates
# the table, and returns once the API answers. Safe to run twice. infra/down.sh stops
# exactly what this started (pid files in .local/run).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/scripts/common.sh"
ensure_deps
cd "$ROOT"
mkdir -p "$RUN_DIR"

LB_PORT="${LB_PORT:-3000}"
LB_API_KEY="${LB_API_KEY:-local-dev-key}"
TABLE="${TABLE_NAME:-leaderboard}"
export LB_API_KEY

log "building the functions and the console"
cargo build --workspace --bins --locked
ensure_console

running() { [ -f "$RUN_DIR/$1.pid" ] && kill -0 "$(cat "$RUN_DIR/$1.pid")" 2>/dev/null; }
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# start NAME PORT CMD...: starts CMD in the background unless this script already did.
start() {
  local name=$1 port=$2
  shift 2
  if running "$name"; then
    log "$name already running (pid $(cat "$RUN_DIR/$name.pid"))"
    return
  fi
  if port_busy "$port"; then
    echo "port $port is taken by a process infra/up.sh did not start; stop it or free the port" >&2
    exit 1
  fi
  log "starting $name on :$port (log: .local/run/$name.log)"
  nohup "$@" >"$RUN_DIR/$name.log" 2>&1 &
  echo $! >"$RUN_DIR/$name.pid"
  wait_tcp 127.0.0.1 "$port" 60 || { tail -20 "$RUN_DIR/$name.log" >&2; exit 1; }
}

if ! running redis && port_busy 6379 && [ "$(redis-cli -p 6379 ping 2>/dev/null)" = "PONG" ]; then
  # e.g. Debian's own redis-server service, started by apt on a systemd machine.
  log "using the Redis already serving 127.0.0.1:6379"
else
  start redis 6379 redis-server --port 6379 --bind 127.0.0.1 --save "" --appendonly no --dir "$RUN_DIR"
fi
# The local Redis Cluster (3 masters, docs/local-stack.md). The API uses it with LB_REDIS=cluster.
if ! running cluster-7001; then
  cluster_pids=() cluster_rc=0
  start_cluster "$RUN_DIR/cluster" 7001 7002 7003 || cluster_rc=$?
  # Pid files even on failure, so infra/down.sh stops whatever did start.
  for entry in "${cluster_pids[@]}"; do echo "${entry#*:}" >"$RUN_DIR/cluster-${entry%%:*}.pid"; done
  [ "$cluster_rc" -eq 0 ] || exit "$cluster_rc"
fi
case "${LB_REDIS:-single}" in
  single) redis_url=redis://127.0.0.1:6379 ;;
  cluster) redis_url=redis+cluster://127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003 ;;
  *) echo "LB_REDIS must be single or cluster" >&2; exit 2 ;;
esac
start dynamodb 8000 "$VENV/bin/python" infra/local/dynamodb_server.py --port 8000
# shellcheck disable=SC2046 # the command's words
start kafka 9092 $(tansu_cmd 9092)
# Template parameters, e.g. the webhooks' (docs/webhooks.md): LB_PARAMETERS="NAME=VALUE ...".
parameters=()
for p in ${LB_PARAMETERS:-}; do parameters+=("--parameter=$p"); done
start stack "$LB_PORT" "$VENV/bin/python" infra/local/stack.py "${parameters[@]}" \
  --table "$TABLE" --port "$LB_PORT" --social-port 3001 --events-port 3002 --events-ws-port 3003 \
  --dynamodb-url http://127.0.0.1:8000 --redis-url "$redis_url" \
  --kinesis --kafka-bootstrap 127.0.0.1:9092 --kafka-topics "${LB_KAFKA_TOPICS:-pod-1-score-updates,pod-2-score-updates,pod-3-score-updates}" \
  --api-key "$LB_API_KEY" --console-port "${LB_CONSOLE_PORT:-3004}" --run-dir "$RUN_DIR" --workers "${LB_WORKERS:-8}" --max-queue-wait "${LB_MAX_QUEUE_WAIT:-2}" \
  --max-connections "${LB_MAX_CONNECTIONS:-128}"

cat <<MSG

The leaderboard API is serving at http://127.0.0.1:$LB_PORT
  server-only routes (ingest, board writes) need the header: x-api-key: $LB_API_KEY
  social-graph stand-in: http://127.0.0.1:3001   DynamoDB: http://127.0.0.1:8000 (table $TABLE)
  match results over streams: Kafka 127.0.0.1:9092 (topics ${LB_KAFKA_TOPICS:-pod-1-score-updates,pod-2-score-updates,pod-3-score-updates}),
    Kinesis stream $TABLE-ScoreEventsStream on http://127.0.0.1:8000; mappings: PUT /admin/mappings/{source}
  operator console: http://127.0.0.1:${LB_CONSOLE_PORT:-3004}/ (signs its calls with the local key)
  live views: ws://127.0.0.1:3003/event/realtime; demo page http://127.0.0.1:3002/demo/?board=<board>&player=<player>
  rank index: $redis_url   (Redis Cluster on 127.0.0.1:7001-7003)
  logs: .local/run/*.log    stop: infra/down.sh
MSG
