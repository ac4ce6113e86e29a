"""The local identity provider: the players' tokens the template's JWT authorizer
(`PlayerJwt`: issuer `JwtIssuer`, audience `JwtAudience`) would accept, and the checks it
makes on them.

In AWS the studio's OIDC provider (Cognito, Auth0, ...) signs tokens with RSA keys it
publishes (JWKS, at the `jwks_uri` of its discovery document), and API Gateway checks them
before any function runs. Locally the same: `Issuer` signs RS256 with an RSA key (a PEM
file, made on first use) and publishes its public half; `Verifier` finds the keys as API
Gateway does (the discovery document, then its `jwks_uri`, fetched again when a token
names a key id it has not seen) and verifies with joserfc, RS256 only (an HS256 token, or
one signed by any other key, is refused). The local issuer's name (`iss`) is not a host:
its discovery document is served by the stack (`serve`), and the stack's gateway reads it
there instead of at `{iss}/.well-known/openid-configuration`. The claims are checked as
API Gateway checks them (its `www-authenticate` reasons are kept): the `Authorization`
header holds the token, with or without `Bearer `; `exp` is required and must be in the
future; `nbf` and `iat`, when present, must not be; `iss` must equal the issuer; `aud`
(or, without `aud`, `client_id`) must name the audience. The verified claims reach the
function as `requestContext.authorizer.jwt.claims`, every value a string.

Get a token with `GET <events API>/demo/token?player=<p>` (JSON) or `&format=jwt` (the
token alone), or `python infra/local/idp.py <player>`.
"""

import argparse
import json
import os
import tempfile
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler

from joserfc import jws, jwt
from joserfc.errors import BadSignatureError, JoseError
from joserfc.jwk import KeySet, RSAKey

from base import ROOT

DEFAULT_KEY = os.path.join(ROOT, ".local", "idp", "key.pem")
DEFAULT_ISSUER = "https://idp.leaderboard.local"
DEFAULT_AUDIENCE = "leaderboard-local"
DISCOVERY = "/.well-known/openid-configuration"
JWKS = "/.well-known/jwks.json"


def load_key(path):
    """The RSA signing key at `path`, made (2048 bits) when there is none; two processes
    making it at once end with one key (the first link wins)."""
    try:
        with open(path, "rb") as f:
            return RSAKey.import_key(f.read())
    except FileNotFoundError:
        pass
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    key = RSAKey.generate_key(2048)
    with tempfile.NamedTemporaryFile(dir=os.path.dirname(os.path.abspath(path)), delete=False) as f:
        f.write(key.as_pem(private=True))
    try:
        os.link(f.name, path)
    except FileExistsError:
        pass
    finally:
        os.unlink(f.name)
    return load_key(path)


class Issuer:
    """Mints the local players' tokens (RS256, under the key's thumbprint as `kid`) and
    publishes the key."""

    def __init__(self, key_path=None, issuer=None, audience=None):
        self.key = load_key(key_path or os.environ.get("LB_JWT_KEY") or DEFAULT_KEY)
        self.kid = self.key.thumbprint()
        self.issuer = issuer or os.environ.get("LB_JWT_ISSUER") or DEFAULT_ISSUER
        self.audience = audience or os.environ.get("LB_JWT_AUDIENCE") or DEFAULT_AUDIENCE

    def mint(self, player, ttl_s=3600, **claims):
        """A token for `player` valid for `ttl_s` seconds; `claims` override or add any
        claim (e.g. `aud=...`, `exp=...`; None removes one), as a test of the checks needs."""
        now = int(time.time())
        body = {"sub": player, "iss": self.issuer, "aud": self.audience, "iat": now,
                "exp": now + ttl_s, "token_use": "access", **claims}
        body = {k: v for k, v in body.items() if v is not None}
        return jwt.encode({"alg": "RS256", "typ": "JWT", "kid": self.kid}, body, self.key)

    def jwks(self):
        return {"keys": [{**self.key.as_dict(private=False), "kid": self.kid, "use": "sig", "alg": "RS256"}]}

    def discovery(self, base_url):
        """The OIDC discovery document as served at `base_url` (the stack's idp server)."""
        return {"issuer": self.issuer, "jwks_uri": base_url + JWKS,
                "id_token_signing_alg_values_supported": ["RS256"], "response_types_supported": ["id_token"],
                "subject_types_supported": ["public"]}


def serve_handler(issuer):
    """The issuer's discovery document and JWKS over HTTP (the stack serves them)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            base = f"http://{self.headers.get('Host') or '127.0.0.1'}"
            path = self.path.split("?", 1)[0]
            doc = issuer.discovery(base) if path == DISCOVERY else issuer.jwks() if path == JWKS else None
            body = json.dumps(doc if doc is not None else {"error": "not found"}).encode()
            self.send_response(200 if doc is not None else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_):
            pass

    return Handler


class Verifier:
    """Players' tokens checked as API Gateway's JWT authorizer checks them, with the keys
    of the issuer's JWKS (found from `discovery_url`)."""

    # A token naming a key id the set lacks refetches it, at most this often.
    REFETCH_S = 10

    def __init__(self, discovery_url, issuer, audience):
        self.discovery_url, self.issuer, self.audience = discovery_url, issuer, audience
        self.keys, self.fetched_at = None, 0.0
        self.lock = threading.Lock()

    def _fetch(self, url):
        with urllib.request.urlopen(url, timeout=5) as r:
            return json.loads(r.read())

    def _key_set(self, kid):
        with self.lock:
            known = self.keys is not None and any(k.kid == kid for k in self.keys.keys)
            if not known and time.time() - self.fetched_at >= (self.REFETCH_S if self.keys else 0):
                self.fetched_at = time.time()
                self.keys = KeySet.import_key_set(self._fetch(self._fetch(self.discovery_url)["jwks_uri"]))
            return self.keys

    def verify(self, authorization):
        """(claims, None) for a valid token in an `Authorization` value, else (None, why),
        `why` worded as API Gateway's `www-authenticate` error_description."""
        if not isinstance(authorization, str) or not authorization.strip():
            return None, None
        token = authorization.strip()
        if token[:7].lower() == "bearer ":
            token = token[7:].strip()
        try:
            header = jws.extract_compact(token.encode()).headers()
            claims = jwt.decode(token, self._key_set(header.get("kid")), algorithms=["RS256"]).claims
        except BadSignatureError:
            return None, "signature is invalid"
        except (JoseError, ValueError, TypeError, KeyError):
            return None, "the token is not a valid JWT"
        if not isinstance(claims, dict):
            return None, "the token is not a valid JWT"
        now = time.time()
        exp, nbf, iat = claims.get("exp"), claims.get("nbf"), claims.get("iat")
        if not isinstance(exp, (int, float)) or isinstance(exp, bool):
            return None, "the token does not have an expiration time"
        if exp <= now:
            return None, "the token has expired"
        if isinstance(nbf, (int, float)) and nbf > now:
            return None, "the token is not valid yet"
        if isinstance(iat, (int, float)) and iat > now + 60:
            return None, "the token was issued in the future"
        if claims.get("iss") != self.issuer:
            return None, "the token does not have a valid issuer"
        aud = claims["aud"] if "aud" in claims else claims.get("client_id")
        auds = aud if isinstance(aud, list) else [aud]
        if self.audience not in auds:
            return None, "the token does not have a valid audience"
        if not isinstance(claims.get("sub"), str) or not claims["sub"]:
            return None, "the token does not have a subject"
        return claims, None

    def subject(self, authorization):
        """The `sub` of a valid token, else None."""
        claims, _ = self.verify(authorization)
        return claims["sub"] if claims else None


class Players:
    """The stack's players: tokens minted by the local issuer, checked by a verifier
    that reads the issuer's keys as API Gateway does."""

    def __init__(self, issuer, discovery_url):
        self.issuer = issuer
        self.verifier = Verifier(discovery_url, issuer.issuer, issuer.audience)
        self.mint = issuer.mint
        self.verify = self.verifier.verify
        self.subject = self.verifier.subject


def as_event_claims(claims):
    """Claims as an HTTP API (payload 2.0) event carries them: every value a string,
    lists as `[a b]`."""
    def text(v):
        if isinstance(v, list):
            return "[" + " ".join(text(x) for x in v) + "]"
        if isinstance(v, bool):
            return str(v).lower()
        return v if isinstance(v, str) else json.dumps(v)
    return {k: text(v) for k, v in claims.items()}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description="Prints a local player's token (LB_JWT_KEY, LB_JWT_ISSUER, "
                                             "LB_JWT_AUDIENCE as the stack's), or with --keygen makes the key "
                                             "file and prints its key id.")
    ap.add_argument("player", nargs="?")
    ap.add_argument("--ttl", type=int, default=3600, help="seconds the token is valid")
    ap.add_argument("--key", help="the signing key's PEM file (default: LB_JWT_KEY, else .local/idp/key.pem)")
    ap.add_argument("--keygen", action="store_true", help="make the key file (if absent) and print its key id")
    args = ap.parse_args()
    if args.keygen:
        print(Issuer(args.key).kid)
    elif args.player:
        print(Issuer(args.key).mint(args.player, args.ttl))
    else:
        ap.error("name a player, or --keygen")
