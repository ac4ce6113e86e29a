"""The local identity provider: the players' tokens the template's JWT authorizer
(`PlayerJwt`: issuer `JwtIssuer`, audience `JwtAudience`) would accept, and the checks it
makes on them.

In AWS the studio's OIDC provider (Cognito, Auth0, ...) signs tokens with RS256 keys
published at its JWKS URL, and API Gateway checks them before any function runs. Locally
one secret signs and checks HS256 tokens; everything else is checked as API Gateway does
(its `www-authenticate` reasons are kept): the `Authorization` header holds the token,
with or without `Bearer `; it must be a signed JWT; `exp` is required and must be in the
future; `nbf` and `iat`, when present, must not be; `iss` must equal the issuer; `aud`
(or, without `aud`, `client_id`) must name the audience. The verified claims reach the
function as `requestContext.authorizer.jwt.claims`, every value a string.

Get a token with `GET <events API>/demo/token?player=<p>` (JSON) or `&format=jwt` (the
token alone), or `python infra/local/idp.py <player>`.
"""

import argparse
import base64
import hashlib
import hmac
import json
import os
import time

DEFAULT_SECRET = "local-jwt-secret-not-for-production"
DEFAULT_ISSUER = "https://idp.leaderboard.local"
DEFAULT_AUDIENCE = "leaderboard-local"


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Idp:
    """Mints and verifies the local players' tokens."""

    def __init__(self, secret=None, issuer=None, audience=None):
        self.secret = secret or os.environ.get("LB_JWT_SECRET") or DEFAULT_SECRET
        self.issuer = issuer or os.environ.get("LB_JWT_ISSUER") or DEFAULT_ISSUER
        self.audience = audience or os.environ.get("LB_JWT_AUDIENCE") or DEFAULT_AUDIENCE

    def _sign(self, signing_input):
        return hmac.new(self.secret.encode(), signing_input.encode(), hashlib.sha256).digest()

    def mint(self, player, ttl_s=3600, **claims):
        """A token for `player` valid for `ttl_s` seconds; `claims` override or add any
        claim (e.g. `aud=...`, `exp=...`), as a test of the checks needs."""
        now = int(time.time())
        body = {"sub": player, "iss": self.issuer, "aud": self.audience, "iat": now,
                "exp": now + ttl_s, "token_use": "access", **claims}
        body = {k: v for k, v in body.items() if v is not None}
        header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
        payload = b64url(json.dumps(body).encode())
        return f"{header}.{payload}.{b64url(self._sign(f'{header}.{payload}'))}"

    def verify(self, authorization):
        """(claims, None) for a valid token in an `Authorization` value, else (None, why),
        `why` worded as API Gateway's `www-authenticate` error_description."""
        if not isinstance(authorization, str) or not authorization.strip():
            return None, None
        token = authorization.strip()
        if token[:7].lower() == "bearer ":
            token = token[7:].strip()
        try:
            header, payload, sig = token.split(".")
            alg = json.loads(unb64url(header)).get("alg")
            claims = json.loads(unb64url(payload))
            signature = unb64url(sig)
        except (ValueError, TypeError, AttributeError):
            return None, "the token is not a valid JWT"
        if not isinstance(claims, dict) or alg != "HS256":
            return None, "the token is not a valid JWT"
        if not hmac.compare_digest(self._sign(f"{header}.{payload}"), signature):
            return None, "signature is invalid"
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
    ap = argparse.ArgumentParser(description="Prints a local player's token (LB_JWT_SECRET, "
                                             "LB_JWT_ISSUER, LB_JWT_AUDIENCE as the stack's).")
    ap.add_argument("player")
    ap.add_argument("--ttl", type=int, default=3600, help="seconds the token is valid")
    args = ap.parse_args()
    print(Idp().mint(args.player, args.ttl))
