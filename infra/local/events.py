"""The local stand-in for the AppSync Events API the template deploys.

Two listeners, as AWS gives an events API two domains:
- the real-time endpoint, `ws://127.0.0.1:<ws port>/event/realtime`, speaking AppSync
  Events' WebSocket protocol: subprotocols `aws-appsync-event-ws` and
  `header-<base64url of the auth headers>`; `connection_init` -> `connection_ack`
  (`connectionTimeoutMs`), `ka` keep-alives, `subscribe` -> `subscribe_success` /
  `subscribe_error`, `data` per event, `unsubscribe` -> `unsubscribe_success`;
- the HTTP endpoint, `POST http://127.0.0.1:<http port>/event` `{channel, events}` (at most
  5 events, each a JSON string), answered `{successful, failed}`; it also serves the demo
  page (`/demo/`), its settings (`/demo/config`), its reads of the API (`/demo/api/<path>
  ?as=<player>`, forwarded as that player) and, locally only, `/demo/token?player=` (a
  player's token, where AWS would have Cognito or the studio's identity provider sign
  the player in) and `POST /demo/drop` (every real-time connection closed, as AppSync
  closes them on a deploy: what clients' reconnects are tested against).

Auth, as the template configures it: subscribers present a JWT (`Authorization`), checked
by the local identity provider (idp.py: signature, expiry, issuer, audience), and its
`sub` is the player; the `players` namespace
accepts a subscription only to the channel that spells the caller's own `sub` (what the
namespace's onSubscribe handler does in AWS). Publishing takes SigV4 (the live
function's role); locally the signature's presence and form are checked, not its key.
"""

import asyncio
import base64
import json
import os
import re
import threading
import urllib.error
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

from websockets.asyncio.server import serve


NAMESPACES = ("leaderboards", "players")
SEGMENT = re.compile(r"^[A-Za-z0-9-]{1,50}$")
KEEP_ALIVE_S = float(os.environ.get("LB_EVENTS_KA_SECONDS", "60"))
CONNECTION_TIMEOUT_MS = 300_000
MAX_EVENTS = 5
MAX_EVENT_BYTES = 240 * 1024
DEMO_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "demo")



def unb64url(text):
    """The subprotocol's base64url (its padding left off) decoded."""
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))

def spell(player):
    """A player id in channel characters, as the Rust side spells it (`live::spell`)."""
    return "".join(c if c.isascii() and c.isalnum() else "".join(f"-{b:02x}" for b in c.encode())
                   for c in player)


def channel_error(channel, wildcard):
    """Why `channel` is not a valid channel path (None if it is)."""
    if not isinstance(channel, str) or not channel.startswith("/"):
        return "a channel is a path starting with /"
    parts = channel[1:].split("/")
    if parts[0] not in NAMESPACES:
        return f"no namespace {parts[0]!r}"
    if len(parts) > 5:
        return "a channel has at most 5 segments"
    for i, seg in enumerate(parts):
        if wildcard and seg == "*" and i == len(parts) - 1 and i > 0:
            continue
        if not SEGMENT.match(seg):
            return f"segment {seg!r} is not 1-50 of A-Z a-z 0-9 -"
    return None


def may_subscribe(channel, sub):
    """The namespaces' subscribe rule: `players` channels only for their own player."""
    parts = channel[1:].split("/")
    if parts[0] != "players":
        return True
    return "".join(parts[1:]) == spell(sub)


def matches(pattern, channel):
    if pattern.endswith("/*"):
        return channel.startswith(pattern[:-1])
    return pattern == channel


class Hub:
    """The subscriptions of every connection, and the fan-out of a publish."""

    def __init__(self, idp):
        self.idp = idp
        self.loop = None
        self.subs = {}  # (conn, id) -> channel pattern
        self.conns = set()
        self.published = 0

    def auth_sub(self, headers):
        token = (headers or {}).get("Authorization") or (headers or {}).get("authorization")
        return self.idp.subject(token)

    async def fanout(self, channel, events):
        sends = []
        for (conn, sid), pattern in list(self.subs.items()):
            if matches(pattern, channel):
                for e in events:
                    sends.append(conn.send(json.dumps({"type": "data", "id": sid, "event": e})))
        # A subscriber gone mid-send is its own session's to clean up.
        await asyncio.gather(*sends, return_exceptions=True)
        self.published += len(events)

    def publish(self, channel, events):
        asyncio.run_coroutine_threadsafe(self.fanout(channel, events), self.loop).result(5)

    async def _drop(self):
        conns = list(self.conns)
        for conn in conns:
            await conn.close(1012, "service restart")
        return len(conns)

    def drop(self):
        """Closes every connection, as AppSync does on a deploy or after a connection's
        lifetime: what a client's reconnect is tested against."""
        return asyncio.run_coroutine_threadsafe(self._drop(), self.loop).result(5)

    async def session(self, conn):
        if conn.request.path.split("?")[0] != "/event/realtime":
            await conn.close(4404, "not found")
            return
        sub = None
        header = next((p for p in _offered(conn) if p.startswith("header-")), None)
        if header is not None:
            try:
                sub = self.auth_sub(json.loads(unb64url(header[len("header-"):])))
            except (ValueError, json.JSONDecodeError):
                sub = None
        ka = None
        self.conns.add(conn)
        try:
            async for raw in conn:
                try:
                    msg = json.loads(raw)
                except json.JSONDecodeError:
                    await conn.send(json.dumps({"type": "error", "errors": [
                        {"errorType": "BadRequestException", "message": "not JSON"}]}))
                    continue
                kind = msg.get("type")
                if kind == "connection_init":
                    if sub is None:
                        await conn.send(json.dumps({"type": "connection_error", "errors": [
                            {"errorType": "UnauthorizedException",
                             "message": "a valid JWT is required in the header subprotocol"}]}))
                        await conn.close(4401, "unauthorized")
                        return
                    await conn.send(json.dumps({"type": "connection_ack",
                                                "connectionTimeoutMs": CONNECTION_TIMEOUT_MS}))
                    ka = asyncio.create_task(_keep_alive(conn))
                elif kind == "subscribe":
                    await self._subscribe(conn, sub, msg)
                elif kind == "unsubscribe":
                    self.subs.pop((conn, msg.get("id")), None)
                    await conn.send(json.dumps({"type": "unsubscribe_success", "id": msg.get("id")}))
                else:
                    await conn.send(json.dumps({"type": "error", "id": msg.get("id"), "errors": [
                        {"errorType": "UnsupportedOperation",
                         "message": f"{kind!r} is not supported by the local events API"}]}))
        except Exception:  # noqa: BLE001 - a dropped client ends its session, nothing else
            pass
        finally:
            self.conns.discard(conn)
            if ka:
                ka.cancel()
            for key in [k for k in self.subs if k[0] is conn]:
                self.subs.pop(key, None)

    async def _subscribe(self, conn, sub, msg):
        sid, channel = msg.get("id"), msg.get("channel")
        who = self.auth_sub(msg.get("authorization")) if msg.get("authorization") else sub

        def refuse(kind, why):
            return conn.send(json.dumps({"type": "subscribe_error", "id": sid,
                                         "errors": [{"errorType": kind, "message": why}]}))
        if sub is None or who is None:
            return await refuse("UnauthorizedException", "not signed in")
        if not isinstance(sid, str) or not sid:
            return await refuse("BadRequestException", "a subscription needs an id")
        why = channel_error(channel, wildcard=True)
        if why:
            return await refuse("BadRequestException", why)
        if not may_subscribe(channel, who):
            return await refuse("UnauthorizedException", "a player's channel is theirs alone")
        self.subs[(conn, sid)] = channel
        await conn.send(json.dumps({"type": "subscribe_success", "id": sid}))


def _offered(conn):
    raw = conn.request.headers.get("Sec-WebSocket-Protocol", "")
    return [p.strip() for p in raw.split(",") if p.strip()]


def _select(conn, offered):
    return "aws-appsync-event-ws" if "aws-appsync-event-ws" in offered else None


async def _keep_alive(conn):
    while True:
        await asyncio.sleep(KEEP_ALIVE_S)
        await conn.send(json.dumps({"type": "ka"}))


def http_handler(hub, idp, config):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def _send(self, status, body, ctype="application/json"):
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", ctype)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self):
            if urlparse(self.path).path == "/demo/drop":
                # Locally only: every real-time connection closed (clients reconnect).
                return self._send(200, {"dropped": hub.drop()})
            if urlparse(self.path).path != "/event":
                return self._send(404, {"errors": [{"errorType": "NotFound"}]})
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length)
            if not (self.headers.get("authorization") or "").startswith("AWS4-HMAC-SHA256 Credential="):
                return self._send(401, {"errors": [{"errorType": "UnauthorizedException",
                                                    "message": "publishing takes SigV4 (IAM)"}]})
            try:
                body = json.loads(raw)
                channel, events = body["channel"], body["events"]
            except (ValueError, KeyError, TypeError):
                return self._send(400, {"errors": [{"errorType": "BadRequestException",
                                                    "message": "expected {channel, events}"}]})
            why = channel_error(channel, wildcard=False)
            if why is None and not (isinstance(events, list) and 1 <= len(events) <= MAX_EVENTS):
                why = f"events must be a list of 1 to {MAX_EVENTS}"
            if why is None and not all(isinstance(e, str) and len(e.encode()) <= MAX_EVENT_BYTES
                                       for e in events):
                why = "each event is a JSON string of at most 240 KB"
            if why is None:
                try:
                    [json.loads(e) for e in events]
                except json.JSONDecodeError:
                    why = "each event must be valid JSON"
            if why:
                return self._send(400, {"errors": [{"errorType": "BadRequestException", "message": why}]})
            hub.publish(channel, events)
            self._send(200, {"failed": [], "successful": [
                {"identifier": str(uuid.uuid4()), "index": i} for i in range(len(events))]})

        def do_GET(self):
            url = urlparse(self.path)
            if url.path == "/demo/token":
                query = parse_qs(url.query)
                player = (query.get("player") or [""])[0]
                if not player:
                    return self._send(400, {"error": "player is required"})
                token = idp.mint(player)
                if (query.get("format") or [""])[0] == "jwt":
                    return self._send(200, token.encode(), "text/plain")
                return self._send(200, {"token": token, "player": player})
            if url.path == "/demo/config":
                return self._send(200, {"realtime": config.get("realtime"), "api": config.get("api")})
            if url.path.startswith("/demo/api/") and config.get("api"):
                return self._forward(url)
            if url.path in ("/demo", "/demo/"):
                with open(os.path.join(DEMO_DIR, "index.html"), "rb") as f:
                    return self._send(200, f.read(), "text/html; charset=utf-8")
            if url.path == "/health":
                return self._send(200, {"published": hub.published, "subscriptions": len(hub.subs)})
            self._send(404, {"errors": [{"errorType": "NotFound"}]})

        def _forward(self, url):
            query = parse_qs(url.query)
            player = (query.pop("as", None) or [""])[0]
            rest = "&".join(f"{k}={v}" for k, vs in query.items() for v in vs)
            target = config["api"] + url.path[len("/demo/api"):] + (f"?{rest}" if rest else "")
            headers = {"Authorization": f"Bearer {idp.mint(player)}"} if player else {}
            req = urllib.request.Request(target, headers=headers)
            try:
                with urllib.request.urlopen(req, timeout=10) as r:
                    return self._send(r.status, r.read())
            except urllib.error.HTTPError as e:
                return self._send(e.code, e.read())

    return Handler


def start(http_port, ws_port, idp, config, host="127.0.0.1"):
    """Starts both listeners on daemon threads; returns (http url, ws url). `config`
    (the API's URL, set once it serves) is read by the demo page."""
    hub = Hub(idp)
    ready = threading.Event()
    bound = {}

    async def main():
        hub.loop = asyncio.get_running_loop()
        async with serve(hub.session, host, ws_port, select_subprotocol=_select,
                         ping_interval=None, max_size=2**20) as server:
            bound["ws"] = server.sockets[0].getsockname()[1]
            ready.set()
            await asyncio.Future()

    threading.Thread(target=lambda: asyncio.run(main()), daemon=True).start()
    if not ready.wait(10):
        raise RuntimeError("the local events API did not start")
    config["realtime"] = f"ws://{host}:{bound['ws']}"
    httpd = ThreadingHTTPServer((host, http_port), http_handler(hub, idp, config))
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return f"http://{host}:{httpd.server_address[1]}", f"ws://{host}:{bound['ws']}"
