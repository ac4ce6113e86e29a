"""The operator console's static files (infra/console/dist, built by `npm run build` in
infra/console) as CloudFront serves them in AWS, and its `config.json`: where the API
is and how to sign calls. Locally the console signs nothing: it sends the local key
(`x-api-key`), the gateway's stand-in for SigV4 (docs/console.md).

`POST /monitoring` stands in for CloudWatch's endpoint (`monitoring.<region>.amazonaws.com`):
`GetMetricData` over the functions' metrics (`monitoring.py`), for a role named in
`x-operator-role` whose policy in template.yaml allows `cloudwatch:GetMetricData`.
"""
import json
import mimetypes
import os
import urllib.parse

import monitoring
from base import ROOT
from httpd import Handler

DIST = os.path.join(ROOT, "infra", "console", "dist")


def handler(config, dist=DIST, metrics=None, metric_roles=()):
    """Serves `dist` and `/config.json` (`config`, filled in once the API serves), and
    with `metrics` (a `monitoring.Metrics`) `POST /monitoring` for the roles in
    `metric_roles`."""

    class Console(Handler):
        def do_POST(self):
            path = urllib.parse.urlsplit(self.path).path
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length > 0 else b""
            if path != "/monitoring" or metrics is None:
                return self.reply(404, {"Content-Type": "text/plain"}, b"not found\n")
            allowed = self.headers.get("x-operator-role", "operator") in metric_roles
            status, text = monitoring.handle(metrics, body, allowed)
            return self.reply(status, {"Content-Type": "text/xml"}, text.encode())

        def do_GET(self):
            path = urllib.parse.urlsplit(self.path).path
            if path == "/config.json":
                body = json.dumps(config).encode()
                return self.reply(200, {"Content-Type": "application/json", "Cache-Control": "no-store"}, body)
            name = "index.html" if path in ("", "/") else path.lstrip("/")
            full = os.path.realpath(os.path.join(dist, name))
            if not full.startswith(os.path.realpath(dist) + os.sep) or not os.path.isfile(full):
                if not os.path.isdir(dist):
                    text = b"the console is not built: run `npm ci && npm run build` in infra/console\n"
                    return self.reply(503, {"Content-Type": "text/plain"}, text)
                return self.reply(404, {"Content-Type": "text/plain"}, b"not found\n")
            with open(full, "rb") as f:
                body = f.read()
            ctype = mimetypes.guess_type(full)[0] or "application/octet-stream"
            return self.reply(200, {"Content-Type": ctype, "Cache-Control": "no-cache"}, body)

        do_HEAD = do_GET

    return Console
