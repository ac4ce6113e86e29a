"""The stack's HTTP servers: a threaded server with a real listen backlog, one that admits
a bounded number of connections (as API Gateway throttles), and a keep-alive handler
that writes each reply in one piece and reads headers without the email parser.
"""
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


MAX_HTTP_BODY = 1024 * 1024  # the shim's own cap; functions enforce their smaller limits


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
