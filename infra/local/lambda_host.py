"""The Lambda service: each function of template.yaml runs as real processes of its
compiled binary, talking the Lambda Runtime API, so `lambda_runtime` runs unchanged;
its processes are the function's concurrency, and an invocation no process takes
within the caller's bound is throttled. Each invocation's platform lines go to the
function's log as Lambda writes them to its log group (START, END, REPORT with the
duration, the billed duration and the memory size): what an invocation costs in log
bytes and GB-seconds is read from there (the benchmark's `matches` rows).
"""
import itertools
import json
import os
import queue
import re
import subprocess
import threading
import time
import uuid

from base import log
from httpd import Handler, Server


RUNTIME_PREFIX = "/2018-06-01/runtime"
_ID_PREFIX = str(uuid.uuid4())[:24]
_ids = itertools.count()


def request_id():
    return f"{_ID_PREFIX}{next(_ids):012x}"


class Invocation:
    def __init__(self, payload, deadline_ms):
        self.id = request_id()
        self.payload = payload
        self.deadline_ms = deadline_ms
        self.taken = threading.Event()  # a process has it (set under the host's lock)
        self.abandoned = False  # its caller stopped waiting before a process took it
        self.done = threading.Event()
        self.result = None
        self.error = None
        self.started = None  # monotonic seconds when a process took it


class Throttled(Exception):
    """No process of the function took an invocation within its caller's bound."""


class FunctionHost:
    """Runs N processes of one function and serves them the Runtime API."""

    def __init__(self, name, spec, bin_dir, env, workers, run_dir):
        self.name = name
        self.spec = spec
        self.bin = os.path.join(bin_dir, spec["binary"])
        self.env = env
        self.workers = workers
        self.run_dir = run_dir
        self.pending = queue.Queue()
        self.inflight = {}
        self.lock = threading.Lock()
        self.procs = []
        self.stopping = False
        # The platform's lines (START, END, REPORT), beside the processes' own output.
        self.platform_log = open(os.path.join(run_dir, f"{name}.log"), "ab", buffering=0)  # noqa: SIM115
        host = self

        class RuntimeApi(Handler):
            def _reply(self, code, body=b"", headers=None):
                self.reply(code, headers or {}, body)

            def do_GET(self):
                if self.path != f"{RUNTIME_PREFIX}/invocation/next":
                    return self._reply(404)
                inv = host.take()
                if inv is None:  # shutting down
                    return self._reply(500)
                self._reply(
                    200,
                    inv.payload,
                    {
                        "Content-Type": "application/json",
                        "Lambda-Runtime-Aws-Request-Id": inv.id,
                        "Lambda-Runtime-Deadline-Ms": str(inv.deadline_ms),
                        "Lambda-Runtime-Invoked-Function-Arn": (
                            f"arn:aws:lambda:us-east-1:000000000000:function:{host.name}"
                        ),
                        "Lambda-Runtime-Trace-Id": f"Root=1-{inv.id[:8]}-{inv.id.replace('-', '')[8:]}",
                    },
                )

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                m = re.match(rf"^{RUNTIME_PREFIX}/invocation/([^/]+)/(response|error)$", self.path)
                if m:
                    with host.lock:
                        inv = host.inflight.pop(m.group(1), None)
                    if inv is not None:
                        if m.group(2) == "response":
                            inv.result = body
                        else:
                            inv.error = body.decode("utf-8", "replace")
                        host.platform_lines(
                            f"END RequestId: {inv.id}",
                            host.report(inv, time.monotonic() - inv.started),
                        )
                        inv.done.set()
                    return self._reply(202, b'{"status":"OK"}', {"Content-Type": "application/json"})
                if self.path == f"{RUNTIME_PREFIX}/init/error":
                    log("function init failed", function=host.name, error=body.decode("utf-8", "replace"))
                    return self._reply(202, b'{"status":"OK"}', {"Content-Type": "application/json"})
                return self._reply(404)

        self.server = Server(("127.0.0.1", 0), RuntimeApi)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def start(self):
        for i in range(self.workers):
            self._spawn(i)

    def _spawn(self, i):
        env = {
            **self.env,
            "AWS_LAMBDA_RUNTIME_API": f"127.0.0.1:{self.port}",
            "AWS_LAMBDA_FUNCTION_NAME": self.name,
            "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(self.spec["memory"]),
            "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
            "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/{self.name}",
            "AWS_LAMBDA_LOG_STREAM_NAME": f"local-{i}",
        }
        logf = open(os.path.join(self.run_dir, f"{self.name}.log"), "ab")  # noqa: SIM115
        proc = subprocess.Popen([self.bin], env=env, stdout=logf, stderr=subprocess.STDOUT)
        logf.close()
        self.procs.append(proc)
        threading.Thread(target=self._watch, args=(proc, i), daemon=True).start()

    def _watch(self, proc, i):
        code = proc.wait()
        if self.stopping:
            return
        log("function process exited; restarting", function=self.name, code=code)
        # Whatever that process was running is lost, as when a Lambda sandbox dies.
        with self.lock:
            for inv in list(self.inflight.values()):
                inv.error = f"process exited with {code}"
                inv.done.set()
            self.inflight.clear()
        time.sleep(0.2)
        self._spawn(i)

    def invoke(self, payload, queue_wait=None):
        """Runs `payload` on the next free process: (result, None) or (None, error).
        With `queue_wait`, raises Throttled if no process took it within that many
        seconds (as Lambda throttles a function at its concurrency limit)."""
        timeout = self.spec["timeout"]
        inv = Invocation(json.dumps(payload).encode(), int((time.time() + timeout) * 1000))
        self.pending.put(inv)
        if queue_wait is not None and not inv.taken.wait(queue_wait) and self._abandon(inv):
            raise Throttled(f"no {self.name} process was free within {queue_wait:g} s")
        if not inv.done.wait(timeout + 5):
            self._abandon(inv)
            return None, f"timed out after {timeout}s"
        return inv.result, inv.error

    def take(self):
        """The next invocation for a process, skipping those their callers abandoned
        (a backlog of requests nobody waits for any more must not cost a process a
        thing, or a stack that fell behind once never catches up); None at shutdown."""
        while True:
            inv = self.pending.get()
            if inv is None:
                return None
            with self.lock:
                if inv.abandoned:
                    continue
                inv.taken.set()
                inv.started = time.monotonic()
                self.inflight[inv.id] = inv
            self.platform_lines(f"START RequestId: {inv.id} Version: $LATEST")
            return inv

    def report(self, inv, seconds):
        """Lambda's REPORT line: billed by the millisecond, rounded up."""
        ms = seconds * 1000
        return (f"REPORT RequestId: {inv.id}\tDuration: {ms:.2f} ms\tBilled Duration: {max(1, -int(-ms // 1))} ms"
                f"\tMemory Size: {self.spec['memory']} MB")

    def platform_lines(self, *lines):
        """Appends the platform's lines to the function's log: one unbuffered write on
        the host's own append-mode handle, so a line never splits a process's own."""
        data = "".join(line + "\n" for line in lines).encode()
        with self.lock:
            self.platform_log.write(data)

    def _abandon(self, inv):
        """Withdraws a queued invocation; False if a process has taken it already."""
        with self.lock:
            if inv.taken.is_set():
                return False
            inv.abandoned = True
            return True

    def stop(self):
        self.stopping = True
        for _ in self.procs:
            self.pending.put(None)
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            try:
                p.wait(3)
            except subprocess.TimeoutExpired:
                p.kill()
        self.server.shutdown()
        self.platform_log.close()
