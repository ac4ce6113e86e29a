"""API Gateway (HTTP API, payload format 2.0): routes from template.yaml, requests turned
into events and replies back into HTTP, the IAM routes' key and the JWT routes' tokens
checked, and (with --check-openapi) every reply validated against openapi.yaml.
"""
import base64
import dataclasses
import fnmatch
import json
import os
import re
import socket
import time
import urllib.parse

import yaml

import idp
import sigv4
from base import ROOT, log
from httpd import Handler, MAX_HTTP_BODY
from lambda_host import Throttled, request_id


OPENAPI = os.path.join(ROOT, "openapi.yaml")


def load_openapi(path=OPENAPI):
    with open(path) as f:
        # libyaml when PyYAML has it: the pure-Python parser took a quarter of a stack's
        # start on this document.
        return yaml.load(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506


class ReplyCheck:
    """Validates replies against the OpenAPI document with openapi-core."""

    def __init__(self, doc):
        from openapi_core import Config, OpenAPI

        # The document itself is checked once per test run (test_stack.OpenApiTest), not
        # by every stack that starts: openapi-core's check took a fifth of a start.
        self.api = OpenAPI.from_dict(doc, config=Config(spec_validator_cls=None))
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
    """An error the gateway answers itself, in the functions' shape (with a request id
    of its own, as every error reply carries one)."""
    return status, {"Content-Type": "application/json"}, json.dumps(
        {"error": {"code": code, "message": message, "request_id": request_id()}}
    ).encode()


# The console's roles (docs/console.md): the role a signed-in person's Cognito group maps
# to in the template, which locally the console names in `x-operator-role`.
CONSOLE_ROLES = {"operator": "OperatorRole", "support": "SupportRole"}


def _invoke_patterns(name, statements):
    """A policy's execute-api:Invoke resources as patterns of `<stage>/<METHOD>/<path
    without its first slash>` (what follows the API's id in the ARN IAM checks). A
    statement of another kind, or a resource of another shape, fails loading: the local
    check must not ignore what IAM would read."""
    patterns = []
    for st in statements:
        if st == METRICS_STATEMENT:  # the overview's metrics: console.py checks it
            continue
        if st.get("Effect") != "Allow" or st.get("Action") != "execute-api:Invoke" or set(st) - {"Effect", "Action", "Resource"}:
            raise ValueError(f"{name}: a statement the local gateway cannot check: {st}")
        for r in st["Resource"]:
            text = r.get("Sub") if isinstance(r, dict) else None
            if not text or "${HttpApi}/" not in text:
                raise ValueError(f"{name}: a resource the local gateway cannot check: {r}")
            patterns.append(text.split("${HttpApi}/", 1)[1])
    return patterns


def console_roles(tpl):
    """Each console role's execute-api:Invoke resources from template.yaml, as patterns
    (`_invoke_patterns`): `{"support": ["*/GET/admin/*"], ...}`."""
    return {name: _invoke_patterns(logical, [st for policy in tpl["Resources"][logical]["Properties"]["Policies"]
                                             for st in policy["PolicyDocument"]["Statement"]])
            for name, logical in CONSOLE_ROLES.items()}


# The managed policy a studio attaches to its game servers' role or user.
GAME_SERVER_POLICY = "GameServerPolicy"


def principal_policies(tpl):
    """What each local key's principal may invoke (sigv4.LOCAL_KEYS): the console roles',
    the game servers' policy, and None (no limit) for an administrator."""
    game_server = tpl["Resources"][GAME_SERVER_POLICY]["Properties"]["PolicyDocument"]["Statement"]
    return {**console_roles(tpl), "game-server": _invoke_patterns(GAME_SERVER_POLICY, game_server), "admin": None}


# The console's overview reads CloudWatch (docs/console.md); GetMetricData has no
# resource to name, so the statement is this one exactly or the local check refuses it.
METRICS_STATEMENT = {"Effect": "Allow", "Action": "cloudwatch:GetMetricData", "Resource": "*"}


def metric_roles(tpl):
    """The console roles whose policy allows `cloudwatch:GetMetricData`."""
    return {name for name, logical in CONSOLE_ROLES.items()
            if any(st == METRICS_STATEMENT
                   for policy in tpl["Resources"][logical]["Properties"]["Policies"]
                   for st in policy["PolicyDocument"]["Statement"])}


def role_allows(patterns, method, path):
    """Whether one of a role's resource patterns covers this call, as IAM matches an
    execute-api ARN (`*` spans `/` too)."""
    resource = f"$default/{method}/{path.lstrip('/')}"
    return any(fnmatch.fnmatchcase(resource, p) for p in patterns)


# The template's HttpApi CorsConfiguration (the console's origin is the stack's own, the
# web games' come from LB_CORS_ORIGINS as CorsOrigins in the template).
CORS_HEADERS = ("authorization, content-type, x-amz-date, x-amz-security-token, x-amz-content-sha256, x-api-key, "
                "x-operator, x-operator-role")
CORS_METHODS = "GET, POST, PUT, PATCH, DELETE"
# What a page may read of a reply besides the safelisted headers: a 429's or 503's wait.
CORS_EXPOSE = "retry-after"


@dataclasses.dataclass
class Callers:
    """Who may call: the IAM routes' signers and the JWT routes' players.

    `keys` are SigV4 key pairs (`sigv4.verify`) in the `region` the stack stands for, each
    naming a principal whose policy (`policies`: principal -> Invoke patterns, None for no
    limit) is held to the call, as IAM holds a signed call to the signer's policies.
    `api_key` is the local shortcut for curl and the tests (`x-api-key`, never in AWS): a
    call with it is a tool's, or, naming a console role in `x-operator-role`, that role's.
    `players` (idp.Verifier) checks players' tokens as the JWT authorizer does."""
    api_key: str
    players: object
    keys: dict
    region: str
    policies: dict


def forbidden(message="Forbidden"):
    """What API Gateway's IAM authorization answers a call it refuses."""
    return 403, {"Content-Type": "application/json"}, json.dumps({"message": message}).encode()


def gateway_handler(routes, hosts, callers, openapi, check, queue_wait=None, origins=()):
    """API Gateway's HTTP API in front of the functions: IAM routes take a SigV4 signature
    (or, locally, `x-api-key`), the rest (the template's default authorizer, `PlayerJwt`) a
    player's token, as `callers` (Callers) says. Browsers from `origins` (the
    console's, and the web games' of LB_CORS_ORIGINS) get CORS as the template's
    CorsConfiguration gives them: preflights answered by the gateway itself, replies
    marked for the origin; a browser on any other origin gets no CORS header and refuses
    the reply."""

    class Gateway(Handler):
        def _handle(self):
            try:
                origin = self.headers.get("Origin")
                allowed = origin in origins
                if allowed and self.command == "OPTIONS" and self.headers.get("Access-Control-Request-Method"):
                    return self.reply(204, {"Access-Control-Allow-Origin": origin, "Vary": "Origin",
                                            "Access-Control-Allow-Headers": CORS_HEADERS,
                                            "Access-Control-Allow-Methods": CORS_METHODS,
                                            "Access-Control-Max-Age": "600"}, b"")
                status, headers, body = self._dispatch()
                if allowed:
                    headers = {**headers, "Access-Control-Allow-Origin": origin, "Vary": "Origin",
                               "Access-Control-Expose-Headers": CORS_EXPOSE}
                self.reply(status, headers, body)
                if getattr(self, "unread_body", False):
                    self._drain()
            except (BrokenPipeError, ConnectionResetError):
                pass

        def _drain(self):
            """After refusing a body: the reply is sent and the write side shut, then what
            the client still sends is read and dropped (for a second, at most 8 MiB), so
            closing does not reset the connection under the reply before the client reads it."""
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_WR)
            self.connection.settimeout(1)
            left = 8 * 1024 * 1024
            try:
                while left > 0:
                    chunk = self.connection.recv(65536)
                    if not chunk:
                        break
                    left -= len(chunk)
            except OSError:
                pass

        def _body(self):
            """The request's body, by Content-Length or chunked, else the refusal to answer
            with what was not read left unread: 413 past MAX_HTTP_BODY, 400 for a length or
            a chunk size that is not a number (digits only: no sign, space or `_`)."""
            malformed = json_error(400, "invalid_request", "the request's body framing is malformed")
            too_large = json_error(413, "payload_too_large", "request body is too large")
            if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
                body = b""
                while True:
                    size = self.rfile.readline(65537).split(b";")[0].strip()
                    if not re.fullmatch(rb"[0-9A-Fa-f]{1,8}", size):
                        return None, malformed
                    size = int(size, 16)
                    if len(body) + size > MAX_HTTP_BODY:
                        return None, too_large
                    if size == 0:
                        while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                            pass  # trailers
                        return body, None
                    body += self.rfile.read(size)
                    self.rfile.readline(65537)
            length = self.headers.get("Content-Length")
            if length is None or length.strip() == "":
                return b"", None
            if not re.fullmatch(r"[0-9]{1,12}", length.strip()):
                return None, malformed
            length = int(length)
            if length > MAX_HTTP_BODY:
                return None, too_large
            return self.rfile.read(length) if length else b"", None

        def __getattr__(self, name):
            # Any method (TRACE, OPTIONS, a made-up one) is routed, and answered as API
            # Gateway answers it: JSON, never the standard library's 501 HTML page.
            if name.startswith("do_"):
                return self._handle
            raise AttributeError(name)

        def _dispatch(self):
            url = urllib.parse.urlsplit(self.path)
            body, refusal = self._body()
            if refusal is not None:
                # The rest of the body is still on the connection: answered, then closed
                # (as API Gateway does), never read as further requests.
                self.close_connection = self.unread_body = True
                return refusal
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
                principal = None
                if route.iam:
                    principal, refusal = self._signer(url, body)
                    if refusal is not None:
                        return refusal
                    patterns = callers.policies.get(principal[0], ())
                    if patterns is not None and not role_allows(patterns, self.command, url.path):
                        # What IAM answers a signed call its policy does not allow.
                        log("refused by the caller's policy", principal=principal[0], route=route.key)
                        return forbidden(f"User: {principal[1]} is not authorized to perform: execute-api:Invoke "
                                         f"on resource: $default/{self.command}{url.path}")
                claims = None
                if not route.iam:
                    claims, why = callers.players.verify(self.headers.get("Authorization"))
                    if claims is None:
                        return unauthorized(why)
                params = {n: urllib.parse.unquote(v) for n, v in zip(route.params, m.groups())}
                try:
                    return self._checked(url, *self._invoke(route, url, params, body, claims, principal))
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

        def _signer(self, url, body):
            """((principal, its ARN, the access key id or None), None) for an IAM route's caller, or (None, the
            refusal to answer): a SigV4 signature checked (sigv4.verify), else the local key."""
            headers = self._lower_headers()
            if headers.get("authorization", "").startswith(sigv4.ALGORITHM):
                try:
                    principal = sigv4.verify(callers.keys, callers.region, self.command, url.path, url.query,
                                             headers, body)
                except sigv4.Refused as e:
                    log("signature refused", why=str(e))
                    return None, forbidden(str(e))
                # Verified, so well formed: `Credential=<key id>/<scope>`.
                key_id = headers["authorization"].split("Credential=", 1)[1].split("/", 1)[0]
                return (principal, f"arn:aws:iam::000000000000:user/local-{principal}", key_id), None
            key = headers.get("x-api-key")
            if key is None:
                return None, json_error(401, "unauthorized", "this route needs a SigV4 signature (locally, x-api-key)")
            if key != callers.api_key:
                return None, forbidden()
            role = headers.get("x-operator-role")
            if role is not None and role not in CONSOLE_ROLES:
                return None, forbidden(f"User: {role} is not authorized to perform: execute-api:Invoke")
            operator = headers.get("x-operator", "local-operator")
            return (role or "admin", f"arn:aws:iam::000000000000:user/{operator}", None), None

        def _lower_headers(self):
            headers = {}
            for k, v in self.headers.items():
                k = k.lower()
                headers[k] = f"{headers[k]},{v}" if k in headers else v
            return headers

        def _invoke(self, route, url, params, body, claims, principal):
            headers = self._lower_headers()
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
                # What the IAM authorizer hands on: the signing principal (locally, a
                # caller with the key may name itself in x-operator; the audit trail
                # records it).
                _, arn, key_id = principal
                event["requestContext"]["authorizer"] = {"iam": {
                    "accessKey": key_id,
                    "accountId": "000000000000",
                    "callerId": arn.rsplit("/", 1)[1],
                    "userArn": arn,
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
