"""The local stand-in for what AWS runs around the functions.

One process plays, on loopback:
- the Lambda service: each function of template.yaml runs as real processes of its
  compiled binary, talking the Lambda Runtime API (so `lambda_runtime` runs unchanged);
  `--workers` processes per function are its concurrency: with `--max-queue-wait`, an
  API request no process takes within that bound is throttled (503 `throttled`,
  Retry-After: 1) as Lambda throttles at a function's limit, and an invocation whose
  caller stopped waiting is never run, so a stack that fell behind catches up;
- API Gateway (HTTP API, payload format 2.0): routes read from template.yaml, requests
  turned into events, replies turned back into HTTP; routes with `Authorizer: AWS_IAM`
  require the header `x-api-key: $LB_API_KEY` instead of SigV4 (and `x-operator` names
  the signing principal the audit trail records); the other routes (the default
  authorizer, `PlayerJwt`) require a player's token, checked as API Gateway's JWT
  authorizer checks it (idp.py: signature, expiry, issuer, audience; 401
  `{"message":"Unauthorized"}` otherwise), its claims handed to the function; any
  method a route does not declare gets a JSON 405 with `Allow` (404 off every route);
- the DynamoDB event source mapping: polls the table's stream and hands batches to the
  projector, honouring `batchItemFailures` (retry from the first failed record, in order),
  `MaximumRetryAttempts`, and the on-failure destination: the template's SQS queue, in
  moto, which receives Lambda's on-failure record (shard and sequence range);
- the Kinesis event source mapping (stream-ingest's) likewise over a Kinesis stream in
  moto (`<table>-ScoreEventsStream`, two shards), records handed over as Lambda's Kinesis
  event; and the self-managed Kafka mappings (one per topic of `--kafka-topics`, standing
  for the KafkaTopics parameter) over a real Kafka-protocol broker (`--kafka-bootstrap`,
  tansu), consumed with kafka-python in the mapping's consumer group, offsets committed
  only for records done, `batchItemFailures` ({partition, offset}) delivered again;
- the SQS event source mappings (the repair function's): short polls of the queue,
  batches handed over as SQS events, `batchItemFailures` kept in the queue (they return
  after its visibility timeout), the rest deleted;
- SQS itself is moto's, on the DynamoDB endpoint: the template's queues are created there
  (named `<table>-<LogicalId>`, so stacks sharing an endpoint stay apart);
- EventBridge likewise: the template's event buses are created there (`<table>-<LogicalId>`)
  and `EVENT_BUS_NAME` names the stack's own; a consumer adds a rule (e.g. to an SQS queue)
  as in AWS;
- the social graph: GET/PUT /players/{p}/friends on its own port;
- the events API (AppSync Events) the live publisher pushes views to: its real-time
  WebSocket protocol and its HTTP publish endpoint, with the demo page (events.py);
- the API's contract: `GET /openapi.json` serves openapi.yaml; with `--check-openapi`
  (the tests' setting) every reply of a template route is validated against it with
  openapi-core, and a reply that breaks it becomes a 500 `openapi_violation` naming what
  broke, so no test can pass on a reply the document does not describe;
- IAM, in part: each function signs its DynamoDB calls with its own access key, and the
  DynamoDB endpoint (dynamodb_server.py) allows only what its role in the template allows.

Under load (infra/bench.sh holds 200 writes/s + 1,000 reads/s through it) what counts is
the shim's own CPU, one interpreter for every request: its HTTP servers keep a real
listen backlog, write each reply in one piece with Nagle off and read headers without
the email parser; request ids come from a counter; the table's stream is read over the
JSON protocol directly (`JsonApi`), its records kept in the wire form Lambda's event
carries.

Usage: stack.py --table NAME --bin-dir target/debug [--port 3000] [--social-port 3001] ...
Prints one line `READY api=http://... social=http://... events=http://... realtime=ws://...`
on stdout when it serves.
"""

import argparse
import base64
import datetime
import http.client
import itertools
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import boto3
import yaml
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config as BotoConfig
from botocore.credentials import Credentials

import events
import iam
import idp
import template_stats

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUNTIME_PREFIX = "/2018-06-01/runtime"
MAX_HTTP_BODY = 1024 * 1024  # the shim's own cap; functions enforce their smaller limits
OPENAPI = os.path.join(ROOT, "openapi.yaml")


def log(msg, **fields):
    line = {"ts": datetime.datetime.now(datetime.timezone.utc).isoformat(), "msg": msg, **fields}
    print(json.dumps(line), file=sys.stderr, flush=True)


# --- template.yaml -------------------------------------------------------------------


class _CfnLoader(yaml.SafeLoader):
    """YAML loader that keeps CloudFormation short tags (!Ref, !GetAtt, ...) as dicts."""


def _cfn_tag(loader, suffix, node):
    if isinstance(node, yaml.ScalarNode):
        value = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)
    return {suffix: value}


_CfnLoader.add_multi_constructor("!", _cfn_tag)


def load_template(path):
    with open(path, encoding="utf-8") as f:
        return yaml.load(f, Loader=_CfnLoader)  # noqa: S506 - SafeLoader subclass


class Route:
    def __init__(self, function, method, path, iam):
        self.function = function
        self.method = method.upper()
        self.path = path
        self.key = f"{self.method} {path}"
        self.iam = iam
        self.params = re.findall(r"{([^}/]+)}", path)
        self.regex = re.compile("^" + re.sub(r"{[^}/]+}", "([^/]+)", path) + "$")


def read_template(path, kafka_topics=None):
    """Functions (name -> props), HTTP routes, and stream mappings from the template.
    `kafka_topics` stands for the KafkaTopics parameter (one Kafka mapping per topic)."""
    values = {"KafkaTopics": list(kafka_topics)} if kafka_topics else None
    tpl = template_stats.expand_for_each(load_template(path), values)
    globals_fn = tpl.get("Globals", {}).get("Function", {})
    defaults = {k: v.get("Default") for k, v in tpl.get("Parameters", {}).items()}
    queues, queue_mappings, buses = {}, [], []

    def resolved(props):
        # A `!Ref Parameter` becomes the parameter's default, as an undeployed stack has it.
        return {k: defaults.get(v["Ref"], v) if isinstance(v, dict) and set(v) == {"Ref"} else v
                for k, v in props.items()}

    functions, routes, streams, schedules = {}, [], [], []
    kinesis, kafka, kinesis_streams = [], [], []
    for name, res in tpl.get("Resources", {}).items():
        if res.get("Type") == "AWS::SQS::Queue":
            queues[name] = res.get("Properties", {})
        if res.get("Type") == "AWS::Kinesis::Stream":
            kinesis_streams.append(name)
        if res.get("Type") == "AWS::Lambda::EventSourceMapping":
            p = {"function": logical_id(res["Properties"]["FunctionName"]), "name": name,
                 **resolved(res["Properties"])}
            if "SelfManagedEventSource" in p:
                kafka.append(p)  # the local broker plays the self-managed cluster
            elif "Topics" not in p:
                kinesis.append(p)  # MSK's (same topics) is not played locally
        if res.get("Type") == "AWS::Events::EventBus":
            buses.append(name)
        if res.get("Type") != "AWS::Serverless::Function":
            continue
        props = {**globals_fn, **res.get("Properties", {})}
        # SAM merges the Globals' environment variables with the function's own.
        props["Environment"] = {"Variables": {
            **globals_fn.get("Environment", {}).get("Variables", {}),
            **res.get("Properties", {}).get("Environment", {}).get("Variables", {}),
        }}
        binary = res.get("Metadata", {}).get("BuildProperties", {}).get("Binary", name)
        functions[name] = {
            "binary": binary,
            "timeout": int(props.get("Timeout", 3)),
            "memory": int(props.get("MemorySize", 128)),
            "env": sorted(props.get("Environment", {}).get("Variables", {}).keys()),
        }
        for ev in props.get("Events", {}).values():
            p = ev.get("Properties", {})
            if ev.get("Type") == "HttpApi":
                iam = p.get("Auth", {}).get("Authorizer") == "AWS_IAM"
                routes.append(Route(name, p["Method"], p["Path"], iam))
            elif ev.get("Type") == "DynamoDB":
                streams.append({"function": name, **resolved(p)})
            elif ev.get("Type") == "Schedule":
                schedules.append({"function": name, **p})
            elif ev.get("Type") == "SQS":
                queue_mappings.append({"function": name, **resolved(p)})
    # Most specific first: literal segments beat parameters (as API Gateway matches).
    routes.sort(key=lambda r: (-r.path.count("/"), r.path.count("{")))
    t = Template(tpl, functions, routes, streams, schedules, queues, queue_mappings, buses)
    t.kinesis, t.kafka, t.kinesis_streams = kinesis, kafka, kinesis_streams
    return t


class Template:
    """What the local stack reads from template.yaml."""

    def __init__(self, raw, functions, routes, streams, schedules, queues, queue_mappings, buses=()):
        self.raw, self.functions, self.routes = raw, functions, routes
        self.streams, self.schedules = streams, schedules
        self.queues, self.queue_mappings = queues, queue_mappings
        self.buses = list(buses)


def logical_id(ref):
    """The resource a `!GetAtt X.Arn` / `!Ref X` names."""
    if isinstance(ref, dict):
        ref = ref.get("GetAtt") or ref.get("Ref") or ""
        if isinstance(ref, list):
            ref = ref[0]
    return str(ref).split(".", 1)[0]


# --- the Lambda service ----------------------------------------------------------------


class Server(ThreadingHTTPServer):
    """A threaded HTTP server with a listen backlog fit for a load: the standard
    library's default of 5 drops a burst's connection attempts, and each dropped SYN
    costs its client a one-second (then three-second, ...) retransmission."""

    daemon_threads = True
    request_queue_size = 1024


class Admitting(Server):
    """The API's server: at most `max_connections` connections are served at once (a
    thread each); one more is answered 503 `throttled` with Retry-After and closed at
    once, as API Gateway throttles a burst, instead of taking a thread. Without the
    bound a stack that falls behind opens a thread for every waiting connection,
    thousands of them, and the interpreter spends its time switching between them:
    every request then times out, where a bound refuses some and serves the rest."""

    THROTTLED = json.dumps({"error": {"code": "throttled", "message": "too many connections; retry"}}).encode()
    REPLY = (
        b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
        b"Connection: close\r\nContent-Length: " + str(len(THROTTLED)).encode() + b"\r\n\r\n" + THROTTLED
    )

    def __init__(self, address, handler, max_connections):
        super().__init__(address, handler)
        self.max_connections = max_connections
        self.active = 0
        self.active_lock = threading.Lock()

    def process_request(self, request, client_address):
        with self.active_lock:
            admitted = self.active < self.max_connections
            self.active += admitted
        if admitted:
            super().process_request(request, client_address)
            return
        try:
            # Take what the client sent already, so the close does not reset the reply.
            request.setblocking(False)
            request.recv(65536)
        except OSError:
            pass
        try:
            request.setblocking(True)
            request.sendall(self.REPLY)
        except OSError:
            pass
        self.shutdown_request(request)

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self.active_lock:
                self.active -= 1


class Handler(BaseHTTPRequestHandler):
    """The stack's HTTP handlers: HTTP/1.1 keep-alive, no request log, and each reply
    written in one piece with Nagle off (a reply sent as headers, then body, with Nagle
    on can sit waiting for the peer's delayed ACK)."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    MAX_HEADERS = 100

    def log_message(self, *args):
        pass

    def parse_request(self):
        """The request line and headers, read without the standard library's email
        parser (a tenth of the shim's CPU under load). `self.headers` answers `get`
        (any case) and `items` (as sent, repeats included)."""
        self.command, self.request_version = None, "HTTP/0.9"
        self.close_connection = True
        self.requestline = str(self.raw_requestline, "iso-8859-1").rstrip("\r\n")
        words = self.requestline.split()
        if len(words) != 3 or words[2] not in ("HTTP/1.0", "HTTP/1.1"):
            self.send_error(400, f"Bad request line {self.requestline!r}")
            return False
        self.command, self.path, self.request_version = words
        headers = Headers()
        while True:
            line = self.rfile.readline(65537)
            if len(line) > 65536 or len(headers.pairs) >= self.MAX_HEADERS:
                self.send_error(431, "Request header fields too large")
                return False
            if line in (b"\r\n", b"\n", b""):
                break
            name, colon, value = str(line, "iso-8859-1").partition(":")
            if not colon or not name or name != name.strip():
                self.send_error(400, "Bad header line")
                return False
            headers.add(name, value.strip())
        self.headers = headers
        connection = headers.get("Connection", "").lower()
        self.close_connection = connection == "close" or (
            self.request_version == "HTTP/1.0" and connection != "keep-alive")
        if headers.get("Expect", "").lower() == "100-continue":
            return self.handle_expect_100()
        return True

    def date_time_string(self, timestamp=None):
        # The Date header, formatted once a second rather than on every reply.
        now = int(time.time()) if timestamp is None else int(timestamp)
        cached = Handler._date
        if cached[0] != now:
            cached = Handler._date = (now, super().date_time_string(now))
        return cached[1]

    _date = (0, "")

    def reply(self, status, headers, body):
        head = [f"{self.protocol_version} {status} {self.responses.get(status, ('',))[0]}\r\n"]
        head += [f"{k}: {v}\r\n" for k, v in headers.items()]
        if self.close_connection:
            head.append("Connection: close\r\n")
        head.append(f"Date: {self.date_time_string()}\r\nContent-Length: {len(body)}\r\n\r\n")
        out = "".join(head).encode("latin-1")
        self.wfile.write(out if self.command == "HEAD" else out + body)


class Headers:
    """A request's headers: looked up in any case, listed as sent."""

    def __init__(self):
        self.pairs = []
        self.by_name = {}

    def add(self, name, value):
        self.pairs.append((name, value))
        self.by_name.setdefault(name.lower(), value)

    def get(self, name, default=None):
        return self.by_name.get(name.lower(), default)

    def items(self):
        return list(self.pairs)


# Request ids: unique within the stack's run, UUID-shaped, without a system call each.
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
                self.inflight[inv.id] = inv
            return inv

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


# --- API Gateway (HTTP API, payload 2.0) -------------------------------------------------


def load_openapi(path=OPENAPI):
    with open(path) as f:
        return yaml.safe_load(f)


class ReplyCheck:
    """Validates replies against the OpenAPI document with openapi-core."""

    def __init__(self, doc):
        from openapi_core import OpenAPI

        self.api = OpenAPI.from_dict(doc)
        self.host = doc["servers"][0]["url"]

    def violation(self, method, path, query, status, headers, body):
        """What the reply breaks in the document, or None when it conforms."""
        from openapi_core.testing import MockRequest, MockResponse

        ctype = next((v for k, v in headers.items() if k.lower() == "content-type"), "application/json")
        request = MockRequest(self.host, method.lower(), path, args=query)
        response = MockResponse(body, status_code=status, headers=headers, content_type=ctype)
        try:
            self.api.validate_response(request, response)
        except Exception as e:  # every openapi-core finding is an exception
            found = [str(e)]
            cause = e.__cause__
            for err in getattr(cause, "schema_errors", None) or []:
                where = "/".join(str(p) for p in err.absolute_path)
                found.append(f"{where or '(body)'}: {err.message}")
            if cause is not None and not getattr(cause, "schema_errors", None):
                found.append(str(cause))
            return "; ".join(found)
        return None


def unauthorized(why):
    """API Gateway's JWT authorizer's refusal: 401 `{"message":"Unauthorized"}`, the
    reason in `www-authenticate` (none when no token was sent)."""
    challenge = "Bearer" if why is None else f'Bearer scope="" error="invalid_token" error_description="{why}"'
    return 401, {"Content-Type": "application/json", "www-authenticate": challenge}, b'{"message":"Unauthorized"}'


def json_error(status, code, message):
    return status, {"Content-Type": "application/json"}, json.dumps(
        {"error": {"code": code, "message": message}}
    ).encode()


def gateway_handler(routes, hosts, api_key, players, openapi, check, queue_wait=None):
    """API Gateway's HTTP API in front of the functions: IAM routes take `x-api-key`, the
    rest (the template's default authorizer, `PlayerJwt`) a player's token checked by
    `players` (idp.Idp) as the JWT authorizer checks it."""

    class Gateway(Handler):
        def _handle(self):
            try:
                self.reply(*self._dispatch())
            except BrokenPipeError:
                pass

        def __getattr__(self, name):
            # Any method (TRACE, OPTIONS, a made-up one) is routed, and answered as API
            # Gateway answers it: JSON, never the standard library's 501 HTML page.
            if name.startswith("do_"):
                return self._handle
            raise AttributeError(name)

        def _dispatch(self):
            url = urllib.parse.urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_HTTP_BODY:
                return json_error(413, "payload_too_large", "request body is too large")
            body = self.rfile.read(length) if length else b""
            if url.path == "/openapi.json" and self.command == "GET":
                return 200, {"Content-Type": "application/json"}, json.dumps(openapi).encode()
            allowed = []
            for route in routes:
                m = route.regex.match(url.path)
                if not m:
                    continue
                if route.method != self.command:
                    allowed.append(route.method)
                    continue
                if route.iam and self.headers.get("x-api-key") != api_key:
                    if self.headers.get("x-api-key") is None:
                        return json_error(401, "unauthorized", "this route needs x-api-key")
                    # What API Gateway's IAM authorizer answers for a bad signature.
                    return 403, {"Content-Type": "application/json"}, b'{"message":"Forbidden"}'
                claims = None
                if not route.iam:
                    claims, why = players.verify(self.headers.get("Authorization"))
                    if claims is None:
                        return unauthorized(why)
                params = {n: urllib.parse.unquote(v) for n, v in zip(route.params, m.groups())}
                try:
                    return self._checked(url, *self._invoke(route, url, params, body, claims))
                except Throttled as e:
                    status, headers, body = json_error(503, "throttled", f"{e}; retry")
                    return status, {**headers, "Retry-After": "1"}, body
            if allowed:
                status, headers, body = json_error(405, "method_not_allowed", f"{self.command} is not allowed here")
                return status, {**headers, "Allow": ", ".join(sorted(set(allowed)))}, body
            return json_error(404, "route_not_found", f"no route for {self.command} {url.path}")

        def _checked(self, url, status, headers, body):
            if check is None:
                return status, headers, body
            query = dict(urllib.parse.parse_qsl(url.query, keep_blank_values=True))
            broken = check.violation(self.command, url.path, query, status, headers, body)
            if broken is None:
                return status, headers, body
            log("reply breaks openapi.yaml", route=f"{self.command} {url.path}", status=status, why=broken)
            return json_error(500, "openapi_violation", f"the {status} reply breaks openapi.yaml: {broken}")

        def _invoke(self, route, url, params, body, claims):
            headers = {}
            for k, v in self.headers.items():
                k = k.lower()
                headers[k] = f"{headers[k]},{v}" if k in headers else v
            query = {}
            for k, v in urllib.parse.parse_qsl(url.query, keep_blank_values=True):
                query[k] = f"{query[k]},{v}" if k in query else v
            try:
                text, is_b64 = body.decode("utf-8"), False
            except UnicodeDecodeError:
                text, is_b64 = base64.b64encode(body).decode(), True
            now = time.time()
            event = {
                "version": "2.0",
                "routeKey": route.key,
                "rawPath": url.path,
                "rawQueryString": url.query,
                "headers": headers,
                "requestContext": {
                    "accountId": "000000000000",
                    "apiId": "local",
                    "domainName": headers.get("host", "127.0.0.1"),
                    "domainPrefix": "local",
                    "http": {
                        "method": self.command,
                        "path": url.path,
                        "protocol": self.request_version,
                        "sourceIp": self.client_address[0],
                        "userAgent": headers.get("user-agent", ""),
                    },
                    "requestId": request_id(),
                    "routeKey": route.key,
                    "stage": "$default",
                    "time": time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(now)),
                    "timeEpoch": int(now * 1000),
                },
                "isBase64Encoded": is_b64,
            }
            if route.iam:
                # Stand-in for the IAM authorizer: in AWS the signing principal arrives
                # here; locally the caller may name itself in x-operator (the audit
                # trail records it).
                operator = headers.get("x-operator", "local-operator")
                event["requestContext"]["authorizer"] = {"iam": {
                    "accountId": "000000000000",
                    "callerId": operator,
                    "userArn": f"arn:aws:iam::000000000000:user/{operator}",
                }}
            else:
                # What the JWT authorizer hands on: the verified token's claims.
                event["requestContext"]["authorizer"] = {"jwt": {"claims": idp.as_event_claims(claims), "scopes": None}}
            if query:
                event["queryStringParameters"] = query
            if params:
                event["pathParameters"] = params
            if body:
                event["body"] = text
            result, error = hosts[route.function].invoke(event, queue_wait)
            if error is not None:
                log("invocation failed", function=route.function, error=error)
                return 500, {"Content-Type": "application/json"}, b'{"message":"Internal Server Error"}'
            return to_http(result)

    return Gateway


def to_http(raw):
    """A payload-2.0 function result as (status, headers, body)."""
    try:
        out = json.loads(raw)
    except ValueError:
        return 500, {"Content-Type": "application/json"}, b'{"message":"Internal Server Error"}'
    if not isinstance(out, dict) or "statusCode" not in out:
        # API Gateway's rule for results without statusCode: 200 with the JSON itself.
        return 200, {"Content-Type": "application/json"}, json.dumps(out).encode()
    headers = dict(out.get("headers") or {})
    body = out.get("body") or ""
    body = base64.b64decode(body) if out.get("isBase64Encoded") else body.encode()
    return int(out["statusCode"]), headers, body


# --- the social graph stand-in ---------------------------------------------------------


def social_handler():
    friends = {}
    lock = threading.Lock()
    pattern = re.compile(r"^/players/([^/]+)/friends$")

    class Social(Handler):
        def _send(self, status, payload=None):
            body = b"" if payload is None else json.dumps(payload).encode()
            self.reply(status, {"Content-Type": "application/json"}, body)

        def do_GET(self):
            m = pattern.match(urllib.parse.urlsplit(self.path).path)
            if not m:
                return self._send(404, {"error": "not found"})
            with lock:
                self._send(200, friends.get(urllib.parse.unquote(m.group(1)), []))

        def do_PUT(self):
            m = pattern.match(urllib.parse.urlsplit(self.path).path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if not m:
                return self._send(404, {"error": "not found"})
            try:
                ids = json.loads(raw)
                assert isinstance(ids, list) and all(isinstance(i, str) for i in ids)
            except (ValueError, AssertionError):
                return self._send(400, {"error": "body must be a JSON list of player ids"})
            with lock:
                friends[urllib.parse.unquote(m.group(1))] = ids
            self._send(204)

    return Social


# --- stream event source mappings (the table's stream, Kinesis) ------------------------


class JsonApi:
    """An AWS JSON-protocol API called without boto3's model: each request signed with
    botocore's SigV4 signer, each reply's JSON handed back as it came. Under load,
    botocore's model-driven parse of a busy stream's records (which the event then
    re-encodes, since Lambda's event carries their wire form anyway) was the largest
    share of the shim's CPU."""

    def __init__(self, endpoint, signing_name, target_prefix, timeout=10):
        url = urllib.parse.urlsplit(endpoint)
        self.https = url.scheme == "https"
        self.netloc = url.netloc
        self.url = f"{url.scheme}://{url.netloc}/"
        self.signer = SigV4Auth(Credentials("local", "local"), signing_name, "us-east-1")
        self.prefix = target_prefix
        self.timeout = timeout
        self.local = threading.local()

    def _connection(self):
        conn = getattr(self.local, "conn", None)
        if conn is None:
            cls = http.client.HTTPSConnection if self.https else http.client.HTTPConnection
            conn = self.local.conn = cls(self.netloc, timeout=self.timeout)
        return conn

    def call(self, action, payload):
        body = json.dumps(payload).encode()
        request = AWSRequest("POST", self.url, data=body, headers={
            "Content-Type": "application/x-amz-json-1.0",
            "X-Amz-Target": f"{self.prefix}.{action}",
        })
        self.signer.add_auth(request)
        headers = dict(request.headers.items())
        for attempt in (1, 2):
            conn = self._connection()
            try:
                conn.request("POST", "/", body, headers)
                reply = conn.getresponse()
                data = reply.read()
                break
            except (OSError, http.client.HTTPException):
                # A kept-alive connection the endpoint closed (or a restarted endpoint):
                # one more try on a new connection.
                conn.close()
                self.local.conn = None
                if attempt == 2:
                    raise
        if reply.status != 200:
            raise RuntimeError(f"{action}: HTTP {reply.status}: {data[:300]!r}")
        return json.loads(data)


class TableStream:
    """The table's DynamoDB stream, as a stream mapping reads it (records kept in their
    wire form: that is what Lambda's event carries)."""

    info_key = "DDBStreamBatchInfo"

    def __init__(self, dynamodb, streams, table):
        self.dynamodb, self.streams, self.table = dynamodb, streams, table

    def arn(self):
        return self.dynamodb.describe_table(TableName=self.table)["Table"].get("LatestStreamArn")

    def shards(self, arn):
        reply = self.streams.call("DescribeStream", {"StreamArn": arn})
        return [s["ShardId"] for s in reply["StreamDescription"]["Shards"]]

    def read(self, arn, sid, after, limit):
        # A fresh iterator on every poll: moto's shard objects may be replaced.
        where = ({"ShardIteratorType": "AFTER_SEQUENCE_NUMBER", "SequenceNumber": after} if after
                 else {"ShardIteratorType": "TRIM_HORIZON"})
        it = self.streams.call("GetShardIterator", {"StreamArn": arn, "ShardId": sid, **where})["ShardIterator"]
        return self.streams.call("GetRecords", {"ShardIterator": it, "Limit": limit})["Records"]

    @staticmethod
    def seq(r):
        return r["dynamodb"]["SequenceNumber"]

    @staticmethod
    def arrival(r):
        # Epoch seconds, as the JSON protocol writes it.
        t = r["dynamodb"].get("ApproximateCreationDateTime")
        return datetime.datetime.fromtimestamp(t, datetime.timezone.utc) if isinstance(t, (int, float)) else None

    def event(self, arn, sid, records):
        return {"Records": [{**r, "eventSourceARN": arn} for r in records]}


class KinesisStream:
    """A Kinesis data stream (moto's), as a stream mapping reads it: records handed over
    as Lambda's Kinesis event."""

    info_key = "KinesisBatchInfo"

    def __init__(self, kinesis, name):
        self.kinesis, self.name = kinesis, name

    def arn(self):
        return self.kinesis.describe_stream_summary(StreamName=self.name)["StreamDescriptionSummary"]["StreamARN"]

    def shards(self, arn):
        return [s["ShardId"] for s in self.kinesis.list_shards(StreamName=self.name)["Shards"]]

    def read(self, arn, sid, after, limit):
        where = ({"ShardIteratorType": "AFTER_SEQUENCE_NUMBER", "StartingSequenceNumber": after} if after
                 else {"ShardIteratorType": "TRIM_HORIZON"})
        it = self.kinesis.get_shard_iterator(StreamName=self.name, ShardId=sid, **where)["ShardIterator"]
        return self.kinesis.get_records(ShardIterator=it, Limit=limit)["Records"]

    @staticmethod
    def seq(r):
        return r["SequenceNumber"]

    @staticmethod
    def arrival(r):
        t = r.get("ApproximateArrivalTimestamp")
        return t if isinstance(t, datetime.datetime) else None

    def event(self, arn, sid, records):
        def one(r):
            t = self.arrival(r)
            return {
                "kinesis": {
                    "kinesisSchemaVersion": "1.0",
                    "partitionKey": r["PartitionKey"],
                    "sequenceNumber": r["SequenceNumber"],
                    "data": base64.b64encode(r["Data"]).decode(),
                    "approximateArrivalTimestamp": t.timestamp() if t else time.time(),
                    "encryptionType": "NONE",
                },
                "eventSource": "aws:kinesis",
                "eventVersion": "1.0",
                "eventID": f"{sid}:{r['SequenceNumber']}",
                "eventName": "aws:kinesis:record",
                "invokeIdentityArn": "arn:aws:iam::000000000000:role/local",
                "awsRegion": "us-east-1",
                "eventSourceARN": arn,
            }
        return {"Records": [one(r) for r in records]}


class StreamPoller:
    """Plays the event source mapping of one function over a stream (the table's, or a
    Kinesis stream): shards polled in order from their start."""

    def __init__(self, host, mapping, stream, interval, destination):
        self.host = host
        self.stream = stream
        self.batch_size = int(mapping.get("BatchSize", 100))
        self.report_failures = "ReportBatchItemFailures" in mapping.get("FunctionResponseTypes", [])
        self.max_retries = int(mapping.get("MaximumRetryAttempts", -1))
        self.bisect = bool(mapping.get("BisectBatchOnFunctionError", False))
        self.interval = interval
        # (send, url): where exhausted batches go (the on-failure destination queue).
        self.destination = destination
        self.cursor = {}  # shard id -> last sequence number handed over for good
        self.stopped = threading.Event()
        self.stats = {"batches": 0, "records": 0, "retries": 0, "discarded": 0}

    def start(self):
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        arn = None
        while not self.stopped.is_set():
            try:
                arn = arn or self.stream.arn()
                moved = self._poll(arn) if arn else False
            except Exception as e:  # the endpoint may be restarting: keep trying
                log("stream poll failed", error=repr(e))
                arn, moved = None, False
                self.stopped.wait(1)
            if not moved:
                self.stopped.wait(self.interval)

    def _poll(self, arn):
        moved = False
        for sid in self.stream.shards(arn):
            records = self.stream.read(arn, sid, self.cursor.get(sid), self.batch_size)
            if records:
                self._deliver(arn, sid, records)
                moved = True
        return moved

    def _deliver(self, arn, sid, records):
        attempts = 0
        seq = self.stream.seq
        while records and not self.stopped.is_set():
            result, error = self.host.invoke(self.stream.event(arn, sid, records))
            self.stats["batches"] += 1
            failed_at = self._first_failure(records, result, error)
            if failed_at is None:
                self.cursor[sid] = seq(records[-1])
                self.stats["records"] += len(records)
                return
            # Everything before the first failure is done; retry from it, in order.
            if failed_at > 0:
                self.cursor[sid] = seq(records[failed_at - 1])
                self.stats["records"] += failed_at
                records, attempts = records[failed_at:], 0
                continue
            attempts += 1
            self.stats["retries"] += 1
            if error is not None and self.bisect and len(records) > 1:
                # BisectBatchOnFunctionError: each half is retried on its own, in order,
                # so one poison record cannot hold the good ones back.
                mid = len(records) // 2
                self._deliver(arn, sid, records[:mid])
                self._deliver(arn, sid, records[mid:])
                return
            if 0 <= self.max_retries < attempts:
                self._discard(arn, sid, records, error or result, attempts)
                return
            self.stopped.wait(min(0.05 * 2**attempts, 2))

    def _first_failure(self, records, result, error):
        if error is not None:
            log("stream batch invocation failed; retrying it", function=self.host.name, error=error)
            return 0
        if not self.report_failures:
            return None
        try:
            failures = json.loads(result).get("batchItemFailures") or []
        except (ValueError, AttributeError):
            log("stream batch answered something unreadable; retrying it", function=self.host.name)
            return 0
        if not failures:
            return None
        ids = {f.get("itemIdentifier") for f in failures}
        seqs = [self.stream.seq(r) for r in records]
        positions = [seqs.index(i) for i in ids if i in seqs]
        # A failure naming no record of the batch fails the whole batch, as Lambda does.
        return min(positions) if positions and len(positions) == len(ids) else 0

    def _discard(self, arn, sid, records, why, attempts):
        seq = self.stream.seq
        self.cursor[sid] = seq(records[-1])
        self.stats["discarded"] += len(records)
        record = on_failure_record(self.host.name, arn, sid, records, why, attempts, self.stream)
        if self.destination is None:
            log("batch given up on, with no on-failure destination", record=record)
            return
        send, url = self.destination
        send(url, json.dumps(record))
        log("batch sent to the on-failure destination", count=len(records), queue=url,
            first=seq(records[0]), last=seq(records[-1]))


def on_failure_record(function, arn, sid, records, why, attempts, stream):
    """What Lambda sends an on-failure destination for a stream batch (shard and
    sequence range)."""
    now = datetime.datetime.now(datetime.timezone.utc)

    def arrival(r):
        return (stream.arrival(r) or now).strftime("%Y-%m-%dT%H:%M:%SZ")

    return failure_record(function, why, attempts, stream.info_key, {
        "shardId": sid,
        "startSequenceNumber": stream.seq(records[0]),
        "endSequenceNumber": stream.seq(records[-1]),
        "approximateArrivalOfFirstRecord": arrival(records[0]),
        "approximateArrivalOfLastRecord": arrival(records[-1]),
        "batchSize": len(records),
        "streamArn": arn,
    })


def failure_record(function, why, attempts, info_key, info):
    """Lambda's on-failure record for a batch given up on: the invocation's context and
    the source's batch info (its range, never the records)."""
    now = datetime.datetime.now(datetime.timezone.utc)
    return {
        "requestContext": {
            "requestId": str(uuid.uuid4()),
            "functionArn": f"arn:aws:lambda:us-east-1:000000000000:function:{function}",
            "condition": "RetryAttemptsExhausted",
            "approximateInvokeCount": attempts,
        },
        "responseContext": {"statusCode": 200, "executedVersion": "$LATEST", "functionError": str(why)[:200]},
        "version": "1.0",
        "timestamp": now.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z",
        info_key: info,
    }


# --- the Kafka event source mapping ----------------------------------------------------


class KafkaPoller:
    """Plays a self-managed Kafka event source mapping (provisioned mode) over a broker on
    loopback: one consumer of the mapping's topic committing to its consumer group, batches handed
    over as Lambda's Kafka event (`records` by `{topic}-{partition}`), a reported failure
    (`{partition, offset}`) delivered again from that offset of that partition while the
    records before it are committed, a failed invocation delivering the whole batch again
    (`MaximumRetryAttempts`, then the on-failure destination). Offsets are committed only
    for records done, so a restart delivers the rest again."""

    def __init__(self, host, mapping, bootstrap, group, interval, destination):
        self.host = host
        (self.topic,) = mapping["Topics"]
        self.bootstrap, self.group = bootstrap, group
        self.batch_size = int(mapping.get("BatchSize", 100))
        self.report_failures = "ReportBatchItemFailures" in mapping.get("FunctionResponseTypes", [])
        self.max_retries = int(mapping.get("MaximumRetryAttempts", -1))
        self.interval = interval
        self.destination = destination
        self.stopped = threading.Event()
        self.stats = {"batches": 0, "records": 0, "retries": 0, "discarded": 0}

    def start(self):
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        from kafka import KafkaConsumer, TopicPartition

        consumer, assigned, checked = None, set(), 0.0
        while not self.stopped.is_set():
            try:
                if consumer is None:
                    consumer = KafkaConsumer(
                        bootstrap_servers=self.bootstrap, group_id=self.group,
                        enable_auto_commit=False, auto_offset_reset="earliest")
                    assigned, checked = set(), 0.0
                if time.monotonic() - checked > 2:
                    # The topic's partitions, assigned to this one consumer (the mapping
                    # is its group's only member; no group rebalance to wait for), from
                    # the group's committed offsets; new partitions join as they appear.
                    checked = time.monotonic()
                    parts = {TopicPartition(self.topic, p)
                             for p in consumer.partitions_for_topic(self.topic) or ()}
                    if parts != assigned:
                        consumer.assign(sorted(parts))
                        assigned = parts
                if not assigned:
                    self.stopped.wait(self.interval)
                    continue
                polled = consumer.poll(timeout_ms=int(self.interval * 1000), max_records=self.batch_size)
                if polled:
                    self._deliver(consumer, {tp: list(rs) for tp, rs in polled.items() if rs})
            except Exception as e:  # the broker may be restarting: start over
                log("kafka poll failed", topic=self.topic, error=repr(e))
                if consumer is not None:
                    try:
                        consumer.close(autocommit=False)
                    except Exception:  # noqa: S110 - closing a broken consumer
                        pass
                consumer = None
                self.stopped.wait(1)

    def event(self, batch):
        def one(r):
            return {
                "topic": r.topic, "partition": r.partition, "offset": r.offset,
                "timestamp": r.timestamp, "timestampType": "CREATE_TIME",
                "key": base64.b64encode(r.key).decode() if r.key is not None else None,
                "value": base64.b64encode(r.value).decode() if r.value is not None else None,
                "headers": [{k: [b - 256 if b > 127 else b for b in (v or b"")]} for k, v in (r.headers or [])],
            }
        return {
            "eventSource": "SelfManagedKafka",
            "bootstrapServers": self.bootstrap,
            "records": {f"{tp.topic}-{tp.partition}": [one(r) for r in rs] for tp, rs in batch.items()},
        }

    def _failures(self, result):
        """Partition key -> offset to deliver again from; None when the whole batch failed."""
        if not self.report_failures:
            return {}
        try:
            failures = json.loads(result).get("batchItemFailures") or []
            out = {}
            for f in failures:
                ident = f["itemIdentifier"]
                key, offset = ident["partition"], int(ident["offset"])
                out[key] = min(out.get(key, offset), offset)
            return out
        except (ValueError, AttributeError, KeyError, TypeError):
            log("kafka batch answered something unreadable; delivering it again", topic=self.topic)
            return None

    def _deliver(self, consumer, batch):
        from kafka.structs import OffsetAndMetadata

        attempts = 0
        while batch and not self.stopped.is_set():
            result, error = self.host.invoke(self.event(batch))
            self.stats["batches"] += 1
            failures = self._failures(result) if error is None else None
            if failures is None:
                attempts += 1
                self.stats["retries"] += 1
                if 0 <= self.max_retries < attempts:
                    self._discard(consumer, batch, error or result, attempts)
                    return
                self.stopped.wait(min(0.05 * 2**attempts, 2))
                continue
            commits, rest = {}, {}
            for tp, rs in batch.items():
                failed_at = failures.get(f"{tp.topic}-{tp.partition}")
                done = [r for r in rs if failed_at is None or r.offset < failed_at]
                keep = [r for r in rs if failed_at is not None and r.offset >= failed_at]
                if done:
                    commits[tp] = OffsetAndMetadata(done[-1].offset + 1, "", -1)
                    self.stats["records"] += len(done)
                if keep:
                    rest[tp] = keep
            if commits:
                consumer.commit(commits)
            if rest:
                attempts += 1
                self.stats["retries"] += 1
                self.stopped.wait(min(0.05 * 2**attempts, 2))
            batch = rest

    def _discard(self, consumer, batch, why, attempts):
        from kafka.structs import OffsetAndMetadata

        count = sum(len(rs) for rs in batch.values())
        self.stats["discarded"] += count
        consumer.commit({tp: OffsetAndMetadata(rs[-1].offset + 1, "", -1) for tp, rs in batch.items()})
        record = failure_record(self.host.name, why, attempts, "KafkaBatchInfo", {
            "batchSize": count,
            "bootstrapServers": self.bootstrap,
            "payloadSize": 0,
            "recordsInfo": {f"{tp.topic}-{tp.partition}": {
                "firstRecordOffset": str(rs[0].offset), "lastRecordOffset": str(rs[-1].offset)}
                for tp, rs in batch.items()},
        })
        if self.destination is None:
            log("kafka batch given up on, with no on-failure destination", record=record)
            return
        send, url = self.destination
        send(url, json.dumps(record))


# --- the SQS event source mapping ------------------------------------------------------


class QueuePoller:
    """Plays an SQS event source mapping: short polls (moto serves every request under
    one lock, so a long poll would stall DynamoDB), each batch handed to the function on a
    thread of its own (Lambda runs queue batches concurrently), `batchItemFailures` left in
    the queue for its visibility timeout, the rest deleted."""

    def __init__(self, host, mapping, sqs, queue, interval):
        self.host = host
        self.sqs = sqs
        self.url, self.arn = queue
        self.batch_size = min(int(mapping.get("BatchSize", 10)), 10)
        self.report_failures = "ReportBatchItemFailures" in mapping.get("FunctionResponseTypes", [])
        self.interval = interval
        self.stopped = threading.Event()
        self.slots = threading.Semaphore(max(1, host.workers))

    def start(self):
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        while not self.stopped.is_set():
            try:
                got = self.sqs.receive_message(QueueUrl=self.url, MaxNumberOfMessages=self.batch_size,
                                               WaitTimeSeconds=0, AttributeNames=["All"],
                                               MessageAttributeNames=["All"]).get("Messages", [])
            except Exception as e:  # the endpoint may be restarting: keep trying
                log("queue poll failed", error=repr(e))
                got = []
            if not got:
                self.stopped.wait(self.interval)
                continue
            self.slots.acquire()
            threading.Thread(target=self._deliver, args=(got,), daemon=True).start()

    def _deliver(self, messages):
        try:
            event = {"Records": [{
                "messageId": m["MessageId"], "receiptHandle": m["ReceiptHandle"], "body": m["Body"],
                "attributes": m.get("Attributes", {}), "messageAttributes": {},
                "md5OfBody": m.get("MD5OfBody"), "eventSource": "aws:sqs",
                "eventSourceARN": self.arn, "awsRegion": "us-east-1"} for m in messages]}
            log("queue batch handed over", function=self.host.name, messages=len(messages))
            result, error = self.host.invoke(event)
            if error is not None:
                log("queue batch failed; its messages return after the visibility timeout",
                    function=self.host.name, error=error)
                return
            failed = set()
            if self.report_failures:
                try:
                    failed = {f.get("itemIdentifier") for f in json.loads(result).get("batchItemFailures") or []}
                except (ValueError, AttributeError):
                    log("queue batch answered something unreadable; keeping it", function=self.host.name)
                    return
            done = [m for m in messages if m["MessageId"] not in failed]
            log("queue batch done", function=self.host.name, done=len(done), kept=len(messages) - len(done))
            if done:
                self.sqs.delete_message_batch(QueueUrl=self.url, Entries=[
                    {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(done)])
        except Exception as e:
            log("queue delivery failed", function=self.host.name, error=repr(e))
        finally:
            self.slots.release()


def ensure_queues(sqs, queues, table):
    """Creates the template's queues (named `<table>-<LogicalId>`), dead-letter targets
    first; returns logical id -> (url, arn)."""
    made = {}

    def make(name):
        if name in made:
            return made[name]
        props = queues[name]
        attrs = {k: str(props[k]) for k in ("VisibilityTimeout", "MessageRetentionPeriod", "DelaySeconds")
                 if k in props}
        redrive = props.get("RedrivePolicy")
        if redrive:
            target = make(logical_id(redrive["deadLetterTargetArn"]))[1]
            attrs["RedrivePolicy"] = json.dumps({"deadLetterTargetArn": target,
                                                 "maxReceiveCount": int(redrive["maxReceiveCount"])})
        url = sqs.create_queue(QueueName=f"{table}-{name}", Attributes=attrs)["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        made[name] = (url, arn)
        return made[name]

    for name in queues:
        make(name)
    return made


def ensure_buses(events, buses, table):
    """Creates the template's event buses (named `<table>-<LogicalId>`); returns logical
    id -> name."""
    made = {}
    existing = {b["Name"] for b in events.list_event_buses()["EventBuses"]}
    for name in buses:
        made[name] = f"{table}-{name}"
        if made[name] not in existing:
            events.create_event_bus(Name=made[name])
    return made


def ensure_kinesis_streams(kinesis, streams, table):
    """Creates the template's Kinesis streams (named `<table>-<LogicalId>`, two shards, so
    a player's records keep to one shard as in AWS); returns logical id -> name."""
    made = {}
    existing = set(kinesis.list_streams().get("StreamNames", []))
    for name in streams:
        made[name] = f"{table}-{name}"
        if made[name] not in existing:
            kinesis.create_stream(StreamName=made[name], ShardCount=2)
    return made


# --- schedules (EventBridge rules) ----------------------------------------------------


def rate_seconds(expression):
    """Seconds of a `rate(N unit)` expression (cron expressions are not played)."""
    m = re.match(r"^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$", expression.strip())
    if not m:
        return None
    unit = {"minute": 60, "hour": 3600, "day": 86400}[m.group(2).rstrip("s")]
    return int(m.group(1)) * unit


def run_schedule(host, mapping, every, stopped):
    payload = json.loads(mapping.get("Input") or "{}")
    while not stopped.wait(every):
        result, error = host.invoke(payload)
        if error is not None:
            log("scheduled invocation failed", function=host.name, error=error)


# --- wiring ----------------------------------------------------------------------------


def ensure_table(dynamodb, tpl, table):
    """Creates the table from the template's ScoresTable definition if it is missing."""
    existing = dynamodb.list_tables()["TableNames"]
    if table in existing:
        return False
    props = next(
        r["Properties"] for r in tpl["Resources"].values() if r.get("Type") == "AWS::DynamoDB::Table"
    )
    extra = {}
    if props.get("GlobalSecondaryIndexes"):
        extra["GlobalSecondaryIndexes"] = props["GlobalSecondaryIndexes"]
    dynamodb.create_table(
        TableName=table,
        AttributeDefinitions=props["AttributeDefinitions"],
        KeySchema=props["KeySchema"],
        BillingMode=props.get("BillingMode", "PAY_PER_REQUEST"),
        StreamSpecification={"StreamEnabled": True, **props["StreamSpecification"]},
        **extra,
    )
    ttl = props.get("TimeToLiveSpecification")
    if ttl:
        dynamodb.update_time_to_live(TableName=table, TimeToLiveSpecification=ttl)
    return True


def main():
    ap = argparse.ArgumentParser(description="Local API Gateway, Lambda and stream mapping.")
    ap.add_argument("--template", default=os.path.join(ROOT, "template.yaml"))
    ap.add_argument("--bin-dir", default=os.path.join(ROOT, "target", "debug"))
    ap.add_argument("--table", required=True)
    ap.add_argument("--port", type=int, default=int(os.environ.get("LB_PORT", 3000)))
    ap.add_argument("--social-port", type=int, default=3001)
    ap.add_argument("--events-port", type=int, default=int(os.environ.get("LB_EVENTS_PORT", 3002)),
                    help="the local events API's HTTP endpoint (publish, demo page); 0: any free port")
    ap.add_argument("--events-ws-port", type=int, default=int(os.environ.get("LB_EVENTS_WS_PORT", 3003)),
                    help="the local events API's real-time (WebSocket) endpoint; 0: any free port")
    ap.add_argument("--jwt-secret", default=os.environ.get("LB_JWT_SECRET", idp.DEFAULT_SECRET),
                    help="HS256 key of the local players' tokens (the gateway and the events API check them)")
    ap.add_argument("--jwt-issuer", default=os.environ.get("LB_JWT_ISSUER", idp.DEFAULT_ISSUER),
                    help="the issuer (iss) players' tokens must name: the template's JwtIssuer")
    ap.add_argument("--jwt-audience", default=os.environ.get("LB_JWT_AUDIENCE", idp.DEFAULT_AUDIENCE),
                    help="the audience (aud) players' tokens must name: the template's JwtAudience")
    ap.add_argument("--dynamodb-url", default="http://127.0.0.1:8000")
    ap.add_argument("--redis-url", default="redis://127.0.0.1:6379")
    ap.add_argument("--key-prefix", default="")
    ap.add_argument("--api-key", default=os.environ.get("LB_API_KEY", "local-dev-key"))
    ap.add_argument("--workers", type=int, default=int(os.environ.get("LB_WORKERS", 2)))
    ap.add_argument("--max-queue-wait", type=float, default=None,
                    help="seconds an API request may wait for a free process of its function before "
                         "a 503 `throttled` with Retry-After (Lambda's concurrency limit); default: "
                         "as long as the function's timeout")
    ap.add_argument("--max-connections", type=int, default=int(os.environ.get("LB_MAX_CONNECTIONS", 512)),
                    help="API connections served at once; one more gets a 503 `throttled` at once")
    ap.add_argument("--poll-interval", type=float, default=0.25, help="seconds; AWS polls 4 times a second")
    ap.add_argument("--no-stream", action="store_true", help="do not run the stream mapping")
    ap.add_argument("--kinesis", action="store_true", default=os.environ.get("LB_KINESIS") == "1",
                    help="create the template's Kinesis streams and play their mapping (polls moto)")
    ap.add_argument("--kafka-bootstrap", default=os.environ.get("LB_KAFKA"),
                    help="host:port of a Kafka broker to play the self-managed Kafka mappings against")
    ap.add_argument("--kafka-topics", default=os.environ.get("LB_KAFKA_TOPICS"),
                    help="comma-separated; stands for the template's KafkaTopics (one mapping each)")
    ap.add_argument("--run-dir", default=os.path.join(ROOT, ".local", "run"))
    ap.add_argument("--redis-timeout-ms", default=os.environ.get("REDIS_TIMEOUT_MS", "200"))
    ap.add_argument("--dynamodb-timeout-ms", default=os.environ.get("DYNAMODB_TIMEOUT_MS", "5000"),
                    help="every DynamoDB call's budget (production: 2000; moto on a loaded 2-core "
                         "machine answers slower)")
    ap.add_argument("--redis-retention-seconds", type=int, default=604800)
    ap.add_argument("--schedule-every", type=float, default=None, help="seconds; overrides every rate() schedule")
    ap.add_argument("--check-openapi", action="store_true",
                    help="validate every reply against openapi.yaml (the tests turn this on)")
    ap.add_argument("--cursor-secret", default=os.environ.get("CURSOR_SECRET", "local-cursor-secret-not-for-production"))
    args = ap.parse_args()
    os.makedirs(args.run_dir, exist_ok=True)

    topics = [x.strip() for x in args.kafka_topics.split(",") if x.strip()] if args.kafka_topics else None
    t = read_template(args.template, topics)
    tpl, functions, routes, streams, schedules = t.raw, t.functions, t.routes, t.streams, t.schedules
    aws_env = {
        "AWS_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "local",
        "AWS_SECRET_ACCESS_KEY": "local",
        "AWS_ENDPOINT_URL_DYNAMODB": args.dynamodb_url,
        "AWS_ENDPOINT_URL_DYNAMODB_STREAMS": args.dynamodb_url,
        "AWS_ENDPOINT_URL_SQS": args.dynamodb_url,
        "AWS_ENDPOINT_URL_EVENTBRIDGE": args.dynamodb_url,
        "AWS_ENDPOINT_URL_KINESIS": args.dynamodb_url,
    }
    boto_cfg = BotoConfig(retries={"max_attempts": 2}, connect_timeout=2, read_timeout=10)
    kw = {
        "endpoint_url": args.dynamodb_url,
        "region_name": "us-east-1",
        "aws_access_key_id": "local",
        "aws_secret_access_key": "local",
        "config": boto_cfg,
    }
    dynamodb = boto3.client("dynamodb", **kw)
    if ensure_table(dynamodb, tpl, args.table):
        log("created table", table=args.table)
    sqs = boto3.client("sqs", **kw)
    queues = ensure_queues(sqs, t.queues, args.table)
    buses = ensure_buses(boto3.client("events", **kw), t.buses, args.table)
    kinesis = boto3.client("kinesis", **kw)
    streams_made = ensure_kinesis_streams(kinesis, t.kinesis_streams, args.table) if args.kinesis else {}

    social = Server(("127.0.0.1", args.social_port), social_handler())
    threading.Thread(target=social.serve_forever, daemon=True).start()
    social_url = f"http://127.0.0.1:{social.server_address[1]}"
    # The players' identity provider: the gateway checks their tokens on the JWT routes,
    # the events API on subscriptions.
    players = idp.Idp(args.jwt_secret, args.jwt_issuer, args.jwt_audience)
    # The events API (AppSync Events in AWS), when a function publishes to it.
    events_url = events_ws = None
    demo_config = {}
    if any("LIVE_EVENTS_URL" in f["env"] for f in functions.values()):
        events_url, events_ws = events.start(args.events_port, args.events_ws_port, players, demo_config)

    # What every process gets, as the Lambda service sets AWS_* for every function;
    # REDIS_KEY_PREFIX is local only (it isolates tests sharing one redis-server).
    base_env = {
        "PATH": os.environ.get("PATH", ""),
        "RUST_LOG": os.environ.get("RUST_LOG", "info"),
        "RUST_BACKTRACE": "1",
        "REDIS_KEY_PREFIX": args.key_prefix,
        **aws_env,
    }
    if "TZ" in os.environ:  # lets a test prove that no zone leaks into window arithmetic
        base_env["TZ"] = os.environ["TZ"]
    # What the template's Parameters and !Ref values resolve to on this machine; each
    # function receives only the variables its template entry declares.
    declared = {
        "TABLE_NAME": args.table,
        "REDIS_URL": args.redis_url,
        "REDIS_TIMEOUT_MS": str(args.redis_timeout_ms),
        "DYNAMODB_TIMEOUT_MS": str(args.dynamodb_timeout_ms),
        "SOCIAL_GRAPH_URL": social_url,
        "RECEIPT_TTL_DAYS": "30",
        "REDIS_RETENTION_SECONDS": str(args.redis_retention_seconds),
        "MAX_FUTURE_SKEW_MS": "60000",
        "CURSOR_SECRET": args.cursor_secret,
        # Hot-spot protection and the write-through switch: the template's defaults,
        # overridable from the environment (tests and the benchmark set them).
        "READ_CACHE_TTL_MS": os.environ.get("READ_CACHE_TTL_MS", "250"),
        "READS_PER_PLAYER_PER_S": os.environ.get("READS_PER_PLAYER_PER_S", "20"),
        "READS_PER_IP_PER_S": os.environ.get("READS_PER_IP_PER_S", "200"),
        "WRITE_THROUGH": os.environ.get("WRITE_THROUGH", "true"),
        "SEAL_SETTLE_SECONDS": os.environ.get("SEAL_SETTLE_SECONDS", "60"),
    }
    if events_url:
        declared["LIVE_EVENTS_URL"] = f"{events_url}/event"
    if "RepairQueue" in queues:
        declared["REPAIR_QUEUE_URL"] = queues["RepairQueue"][0]
    if "StreamDeadLetterQueue" in queues:
        declared["DEAD_LETTER_QUEUE_URL"] = queues["StreamDeadLetterQueue"][0]
    if "LeaderboardEventBus" in buses:
        declared["EVENT_BUS_NAME"] = buses["LeaderboardEventBus"]
    hosts = {}
    for name, spec in functions.items():
        if not os.path.exists(os.path.join(args.bin_dir, spec["binary"])):
            sys.exit(f"missing binary for {name}: {args.bin_dir}/{spec['binary']} (build first)")
        fn_env = {**base_env, **{k: v for k, v in declared.items() if k in spec["env"]}}
        # Its own credentials, as Lambda hands each function its execution role's: the
        # DynamoDB endpoint holds every call to what the template's role allows.
        fn_env["AWS_ACCESS_KEY_ID"] = f"{iam.ACCESS_KEY_PREFIX}{name}"
        hosts[name] = FunctionHost(name, spec, args.bin_dir, fn_env, args.workers, args.run_dir)
        hosts[name].start()

    def destination_of(mapping):
        target = mapping.get("DestinationConfig", {}).get("OnFailure", {}).get("Destination")
        if target is None:
            return None
        return (lambda u, body: sqs.send_message(QueueUrl=u, MessageBody=body), queues[logical_id(target)][0])

    pollers = []
    if not args.no_stream:
        streams_api = JsonApi(args.dynamodb_url, "dynamodb", "DynamoDBStreams_20120810")
        table_stream = TableStream(dynamodb, streams_api, args.table)
        for mapping in streams:
            pollers.append(StreamPoller(hosts[mapping["function"]], mapping, table_stream,
                                        args.poll_interval, destination_of(mapping)))
    for mapping in t.kinesis:
        # The stream the mapping names (created, or the parameter's): here the one made.
        name = next(iter(streams_made.values()), None)
        if name is not None:
            pollers.append(StreamPoller(hosts[mapping["function"]], mapping, KinesisStream(kinesis, name),
                                        args.poll_interval, destination_of(mapping)))
    for mapping in t.kafka:
        if not args.kafka_bootstrap:
            log("no Kafka broker given (--kafka-bootstrap); the Kafka mappings are not played")
            break
        pollers.append(KafkaPoller(hosts[mapping["function"]], mapping, args.kafka_bootstrap,
                                   f"{args.table}-{mapping['function']}", args.poll_interval,
                                   destination_of(mapping)))
    for p in pollers:
        p.start()
    for mapping in t.queue_mappings:
        p = QueuePoller(hosts[mapping["function"]], mapping, sqs, queues[logical_id(mapping["Queue"])],
                        args.poll_interval)
        p.start()
        pollers.append(p)

    stopped = threading.Event()
    for mapping in schedules:
        every = args.schedule_every or rate_seconds(mapping.get("Schedule", ""))
        if every:
            threading.Thread(
                target=run_schedule, args=(hosts[mapping["function"]], mapping, every, stopped), daemon=True
            ).start()

    openapi = load_openapi()
    check = ReplyCheck(openapi) if args.check_openapi else None
    gateway = gateway_handler(routes, hosts, args.api_key, players, openapi, check, args.max_queue_wait)
    api = Admitting(("127.0.0.1", args.port), gateway, args.max_connections)
    api_url = f"http://127.0.0.1:{api.server_address[1]}"
    demo_config["api"] = api_url

    def shutdown(*_):
        stopped.set()
        for p in pollers:
            p.stopped.set()
        for h in hosts.values():
            h.stop()
        os._exit(0)

    signal.signal(signal.SIGTERM, shutdown)
    signal.signal(signal.SIGINT, shutdown)
    log("serving", api=api_url, social=social_url, events=events_url, events_realtime=events_ws,
        routes=[r.key for r in routes], functions=sorted(hosts), table=args.table)
    print(f"READY api={api_url} social={social_url} events={events_url} realtime={events_ws}", flush=True)
    api.serve_forever()


if __name__ == "__main__":
    main()
