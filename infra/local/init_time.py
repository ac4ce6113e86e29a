"""Cold-start figure of each function: process start to its first Runtime API poll.

Plays the Lambda Runtime API on loopback (only `GET /2018-06-01/runtime/invocation/next`
is needed: the first one is the end of init) and starts each bootstrap as Lambda would,
with Lambda's variables and the configuration the functions read (Redis in cluster form). Redis and DynamoDB point at loopback listeners
that count connections: init must open none (clients are built, not connected).

Two things make a host's figure differ from Lambda's, and both are taken out:
- the CA certificates: a function's HTTPS clients read the system's roots at init.
  Amazon Linux 2023 (Lambda's `provided.al2023`) keeps them in one bundle file; a Debian
  host has a bundle and a folder of 140-odd files, read one by one (about 10 ms here).
  So the functions run with `SSL_CERT_FILE` (the host's bundle) and an empty
  `SSL_CERT_DIR`, as on Lambda.
- starting a process from Python and its first connection: measured in the same run on
  a floor that does nothing else (bash opening the Runtime API and polling, `floor`),
  and reported beside each function (`init_ms_p50_over_floor`, the function's own init).

Usage: init_time.py --bin-dir target/lambda --runs 20 [--out FILE.json]
Prints one line per function (median and p90 in ms, bootstrap size) and writes JSON.
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

def functions(bin_dir):
    """Every function built into `bin_dir` (cargo-lambda's `NAME/bootstrap` or a plain
    `NAME` binary), named as the workspace's functions/ folders name them."""
    names = sorted(os.listdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "functions")))
    return [n for n in names
            if os.path.exists(os.path.join(bin_dir, n, "bootstrap")) or os.path.exists(os.path.join(bin_dir, n))]


class FirstPoll:
    """A Runtime API whose `next` never answers; it notes when the first poll arrived."""

    def __init__(self):
        self.polled = threading.Event()
        self.at = None
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's naming
                if self.path.endswith("/runtime/invocation/next") and not outer.polled.is_set():
                    outer.at = time.perf_counter()
                    outer.polled.set()
                time.sleep(5)  # hold the poll, as the real API does between invocations

            def log_message(self, *_):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def address(self):
        return f"127.0.0.1:{self.server.server_address[1]}"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class Counter:
    """A TCP listener that counts connections (stands in for Redis and DynamoDB)."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.1)
        self.count = 0
        self.stop = False
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def port(self):
        return self.sock.getsockname()[1]

    def _accept(self):
        while not self.stop:
            try:
                conn, _ = self.sock.accept()
                self.count += 1
                conn.close()
            except OSError:
                continue


def env_for(name, api, redis_port, dynamo_port):
    return {
        "PATH": os.environ.get("PATH", ""),
        "AWS_LAMBDA_RUNTIME_API": api,
        "AWS_LAMBDA_FUNCTION_NAME": name,
        "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256",
        "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/{name}",
        "AWS_LAMBDA_LOG_STREAM_NAME": "init-time",
        "AWS_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "local",
        "AWS_SECRET_ACCESS_KEY": "local",
        "AWS_ENDPOINT_URL_DYNAMODB": f"http://127.0.0.1:{dynamo_port}",
        "TABLE_NAME": "leaderboard",
        "REDIS_URL": f"redis+cluster://127.0.0.1:{redis_port}",
        "CURSOR_SECRET": "init-time-cursor-secret",
        "SOCIAL_GRAPH_URL": "http://127.0.0.1:9/",
        "EVENT_BUS_NAME": "leaderboard-events",
        "DEAD_LETTER_QUEUE_URL": "http://127.0.0.1:9/000000000000/dead-letters",
        "REPAIR_QUEUE_URL": "http://127.0.0.1:9/000000000000/repair",
        "LIVE_EVENTS_URL": "https://events.example.invalid",
        "RUST_LOG": "warn",
        "SSL_CERT_FILE": CA_BUNDLE,
        "SSL_CERT_DIR": EMPTY_DIR,
    }


# The host's CA bundle (Debian's, else Amazon Linux's) and an empty folder of certificates.
CA_BUNDLE = next((p for p in ("/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt")
                  if os.path.exists(p)), "/dev/null")
EMPTY_DIR = os.path.join(os.environ.get("TMPDIR", "/tmp"), "init-time-no-certs")

# The floor: a process that opens the Runtime API and polls, and does nothing else.
FLOOR = ["bash", "-c", 'exec 3<>"/dev/tcp/${AWS_LAMBDA_RUNTIME_API%:*}/${AWS_LAMBDA_RUNTIME_API#*:}"; '
         'printf "GET /2018-06-01/runtime/invocation/next HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n" >&3; read -r _ <&3']


def measure(path, name, runs):
    """`path`'s init over `runs` cold starts (a list for the floor's command)."""
    redis, dynamo = Counter(), Counter()
    times = []
    try:
        for _ in range(runs):
            api = FirstPoll()
            start = time.perf_counter()
            proc = subprocess.Popen(path if isinstance(path, list) else [path], env=env_for(name, api.address, redis.port, dynamo.port),
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            ok = api.polled.wait(10)
            proc.kill()
            _, err = proc.communicate()
            api.close()
            if not ok:
                sys.exit(f"{name}: no Runtime API poll within 10 s\n{err.decode(errors='replace')}")
            times.append((api.at - start) * 1000)
    finally:
        redis.stop = dynamo.stop = True
    times.sort()
    return {
        "function": name,
        "bytes": 0 if isinstance(path, list) else os.path.getsize(path),
        "init_ms_p50": round(statistics.median(times), 2),
        "init_ms_p90": round(times[int(0.9 * (len(times) - 1))], 2),
        "init_ms_min": round(times[0], 2),
        "runs": runs,
        "connections_before_first_poll": {"redis": redis.count, "dynamodb": dynamo.count},
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin-dir", default="target/lambda")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--out")
    args = ap.parse_args()
    os.makedirs(EMPTY_DIR, exist_ok=True)
    floor = measure(FLOOR, "floor", args.runs)
    print(f"floor      (bash polling)  init p50 {floor['init_ms_p50']:6.2f} ms")
    rows = []
    for name in functions(args.bin_dir):
        path = os.path.join(args.bin_dir, name, "bootstrap")
        if not os.path.exists(path):
            path = os.path.join(args.bin_dir, name)
        row = measure(path, name, args.runs)
        row["init_ms_p50_over_floor"] = round(row["init_ms_p50"] - floor["init_ms_p50"], 2)
        row["floor_ms_p50"] = floor["init_ms_p50"]
        rows.append(row)
        conns = row["connections_before_first_poll"]
        print(f"{name:10} {row['bytes'] / 1e6:6.2f} MB  init p50 {row['init_ms_p50']:6.2f} ms"
              f" ({row['init_ms_p50_over_floor']:6.2f} over the floor)"
              f"  p90 {row['init_ms_p90']:6.2f} ms  connections at init: redis {conns['redis']},"
              f" dynamodb {conns['dynamodb']}")
        if conns["redis"] or conns["dynamodb"]:
            sys.exit(f"{name} connected to a backend during init")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
