#!/usr/bin/env bash
# A Redis Cluster on loopback: the one way the project starts one (infra/test.sh and
# infra/up.sh through common.sh's start_cluster, the end-to-end tests' OwnCluster).
#
# Usage: cluster.sh DIR REPLICAS PORT... [-- REDIS-SERVER-ARGS...]
#
# Starts one redis-server per port in cluster mode (files and logs in DIR, nothing
# persisted), then forms the cluster with `redis-cli --cluster create`: the first
# ports/(1+REPLICAS) ports become masters with the slots split evenly in port order, each
# with its own config epoch (left equal, nodes settle the collision later and a slot
# moved meanwhile can lose its keys), and REPLICAS replicas each. Extra arguments go to
# every redis-server (e.g. a shorter --cluster-node-timeout). REDIS_SERVER names another
# server binary speaking the same protocol (infra/test.sh's Valkey pass).
#
# Prints "PORT PID" for each node it started, and returns once every node reports
# cluster_state:ok and every replica's link to its master is up. Ports that already
# serve a healthy cluster are left as they are (safe to run twice; prints nothing).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

dir=$1 replicas=$2
shift 2
ports=() extra=()
while (($#)); do
  if [ "$1" = "--" ]; then
    shift
    extra=("$@")
    break
  fi
  ports+=("$1")
  shift
done

healthy() {
  local port
  for port in "${ports[@]}"; do
    [ "$(redis-cli -p "$port" cluster info 2>/dev/null | tr -d '\r' | grep cluster_state)" = "cluster_state:ok" ] || return 1
  done
  for port in "${ports[@]}"; do
    local role
    role="$(redis-cli -p "$port" info replication 2>/dev/null | tr -d '\r')"
    if grep -q '^role:slave' <<<"$role"; then
      grep -q '^master_link_status:up' <<<"$role" || return 1
    fi
  done
}

mkdir -p "$dir"
nodes=()
for port in "${ports[@]}"; do nodes+=("127.0.0.1:$port"); done
if healthy; then
  log "Redis Cluster already serving ${nodes[*]}"
  exit 0
fi
for port in "${ports[@]}"; do
  # A node keeps no data, so a config file left by an earlier run only stands in the way
  # of creating the cluster afresh.
  rm -f "$dir/nodes-$port.conf"
  "${REDIS_SERVER:-redis-server}" --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$dir" \
    --cluster-enabled yes --cluster-config-file "nodes-$port.conf" \
    --cluster-node-timeout 5000 "${extra[@]}" >"$dir/redis-$port.log" 2>&1 &
  echo "$port $!"
done
for port in "${ports[@]}"; do wait_tcp 127.0.0.1 "$port" 30; done
redis-cli --cluster create "${nodes[@]}" --cluster-replicas "$replicas" --cluster-yes \
  >"$dir/create.log" 2>&1 || { cat "$dir/create.log" >&2; exit 1; }
for ((i = 0; i < 300; i++)); do
  healthy && exit 0
  sleep 0.1
done
echo "the Redis Cluster on ${nodes[*]} did not become ready" >&2
exit 1
