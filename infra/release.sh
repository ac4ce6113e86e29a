#!/usr/bin/env bash
# Release builds of every function with cargo-lambda (from the project venv, offline once
# the crates are fetched), then their figures: each bootstrap's size and its init time
# (process start to the first Runtime API poll, infra/local/init_time.py), written to
# bench/results/release-<arch>.{json,md}.
#
#   infra/release.sh                 arm64, what template.yaml deploys
#   infra/release.sh --arch x86_64   the same for x86_64
#
# Building for arm64 needs Rust's aarch64-unknown-linux-gnu standard library
# (`rustup target add aarch64-unknown-linux-gnu`, which downloads it once); cargo-lambda
# links with the zig it ships. Init times are measured only for the host's own arch.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/scripts/common.sh"
ensure_deps
cd "$ROOT"

arch=arm64
while [ $# -gt 0 ]; do
  case "$1" in
    --arch) arch=$2; shift 2 ;;
    *) echo "usage: infra/release.sh [--arch arm64|x86_64]" >&2; exit 2 ;;
  esac
done
case "$arch" in
  arm64) target=aarch64-unknown-linux-gnu; flag=--arm64 ;;
  x86_64) target=x86_64-unknown-linux-gnu; flag=--x86-64 ;;
  *) echo "--arch must be arm64 or x86_64" >&2; exit 2 ;;
esac

if ! rustup target list --installed 2>/dev/null | grep -qx "$target"; then
  log "adding Rust's $target standard library (rustup)"
  rustup target add "$target" || {
    echo "cannot install the $target standard library: rustup could not download it." >&2
    echo "Install it where rustup can reach static.rust-lang.org, or build another arch." >&2
    exit 1
  }
fi

functions=()
for dir in functions/*/; do functions+=("$(basename "$dir")"); done
packages=()
for f in "${functions[@]}"; do packages+=(-p "$f"); done
log "cargo lambda build --release $flag (${functions[*]})"
start=$(date +%s)
cargo lambda build --release "$flag" --locked "${packages[@]}"
log "built in $(($(date +%s) - start)) s"

out="bench/results/release-$arch"
mkdir -p bench/results
# The release profile as Cargo.toml sets it (read, not typed, so the figures say what
# built them).
profile="$("$VENV/bin/python" -c 'import tomllib; p = tomllib.load(open("Cargo.toml", "rb"))["profile"]["release"]; print(", ".join(f"{k} {v!r}" for k, v in p.items() if k != "package"))')"
if [ "$(uname -m)" = "$([ "$arch" = arm64 ] && echo aarch64 || echo x86_64)" ]; then
  log "init time: process start to the first Runtime API poll (20 runs each)"
  "$VENV/bin/python" infra/local/init_time.py --bin-dir target/lambda --runs 20 --out "$out.json"
  "$VENV/bin/python" - "$out.json" "$arch" "$(rustc --version)" "$profile" "$(git rev-parse --short HEAD)" >"$out.md" <<'PY'
import json, platform, sys
rows = json.load(open(sys.argv[1]))
print(f"# Release bootstraps ({sys.argv[2]}, `bash infra/release.sh --arch {sys.argv[2]}`)\n")
print(f"{sys.argv[3]}; {platform.processor() or platform.machine()}; commit {sys.argv[5]}; profile.release: {sys.argv[4]}.\n")
print("| function | bootstrap | init p50 | init p90 | connections during init |")
print("|---|---:|---:|---:|---|")
for r in rows:
    c = r["connections_before_first_poll"]
    print(f"| {r['function']} | {r['bytes'] / 1e6:.2f} MB | {r['init_ms_p50']:.1f} ms | {r['init_ms_p90']:.1f} ms | redis {c['redis']}, dynamodb {c['dynamodb']} |")
PY
else
  {
    echo "# Release bootstraps ($arch, \`bash infra/release.sh --arch $arch\`)"
    echo
    echo "$(rustc --version); cross-built on $(uname -m), so no init times (they are measured on the host's own arch); commit $(git rev-parse --short HEAD); profile.release: $profile."
    echo
    echo "| function | bootstrap |"
    echo "|---|---:|"
    for f in "${functions[@]}"; do
      stat -c "%s $f" "target/lambda/$f/bootstrap"
    done | awk '{ printf "| %s | %.2f MB |\n", $2, $1 / 1e6 }'
  } | tee "$out.md"
fi
log "figures in $out.md"
