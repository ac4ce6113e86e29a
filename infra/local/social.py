"""The social graph stand-in: GET/PUT /players/{p}/friends on its own port.
"""
import json
import re
import threading
import urllib.parse

from httpd import Handler


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
