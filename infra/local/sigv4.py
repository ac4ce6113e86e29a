"""API Gateway's IAM authorization, locally: a request signed with AWS Signature Version 4
is checked as execute-api checks it, and the key that signed it names the principal whose
policy (from template.yaml) is then held to the call.

The canonical request is rebuilt from what arrived, never from what the client meant:
the method; the path exactly as sent, URI-encoded once more (execute-api, like every
service but S3, signs the encoded path: `arena%3Aranked` is signed as `arena%253Aranked`);
the query's names and values decoded and encoded again by RFC 3986, sorted; the headers
the `SignedHeaders` list names, their values trimmed and joined as they arrived (`host`
must be among them); and the SHA-256 of the body received. The credential's scope must be
the request's date, this region, `execute-api` and `aws4_request`; the date
(`x-amz-date`) at most five minutes from the gateway's clock either way. Refusals are
API Gateway's: 403 with its `message`.

Local keys are `access key id -> (secret, principal)`; `LOCAL_KEYS` are the stack's
defaults (docs/operations.md), one per principal the template defines.
"""
import calendar
import hashlib
import hmac
import re
import time
import urllib.parse

ALGORITHM = "AWS4-HMAC-SHA256"
SERVICE = "execute-api"
MAX_SKEW_S = 300

# The local stack's key pairs, documented for local use only: the game servers' (held to
# GameServerPolicy), the console roles' (OperatorRole, SupportRole) and an administrator's
# (an account's own admin user: no policy limits it, as the x-api-key caller).
LOCAL_KEYS = {
    "AKIALOCALGAMESERVER0": ("local-game-server-secret", "game-server"),
    "AKIALOCALOPERATOR000": ("local-operator-secret", "operator"),
    "AKIALOCALSUPPORT0000": ("local-support-secret", "support"),
    "AKIALOCALADMIN000000": ("local-admin-secret", "admin"),
}

MISMATCH = ("The request signature we calculated does not match the signature you provided. "
            "Check your AWS Secret Access Key and signing method. Consult the service documentation for details.")

_CREDENTIAL = re.compile(
    r"^AWS4-HMAC-SHA256\s+Credential=([^/,\s]+)/(\d{8})/([^/,\s]+)/([^/,\s]+)/aws4_request\s*,\s*"
    r"SignedHeaders=([a-z0-9\-;]+)\s*,\s*Signature=([0-9a-f]{64})\s*$")


class Refused(Exception):
    """A request the IAM authorizer refuses: 403 and API Gateway's message."""


def encode(text):
    """RFC 3986 percent-encoding as SigV4 has it: only `A-Za-z0-9-_.~` stay."""
    return urllib.parse.quote(text, safe="-_.~")


def canonical_query(raw):
    pairs = []
    for part in raw.split("&") if raw else []:
        name, _, value = part.partition("=")
        pairs.append((encode(urllib.parse.unquote(name)), encode(urllib.parse.unquote(value))))
    return "&".join(f"{n}={v}" for n, v in sorted(pairs))


def canonical_path(raw):
    """The path as sent, encoded once more segment by segment (`/` kept)."""
    return "/".join(encode(seg) for seg in (raw or "/").split("/"))


def canonical_request(method, raw_path, raw_query, headers, signed, body):
    """`headers` maps lower-cased names to their values as they arrived (repeats joined
    with `,`)."""
    lines = [f"{name}:{' '.join(headers.get(name, '').split())}\n" for name in signed]
    return "\n".join([method, canonical_path(raw_path), canonical_query(raw_query), "".join(lines),
                      ";".join(signed), hashlib.sha256(body).hexdigest()])


def _hmac(key, text):
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def signature(secret, date, region, amz_date, canonical):
    scope = f"{date}/{region}/{SERVICE}/aws4_request"
    to_sign = "\n".join([ALGORITHM, amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    key = _hmac(_hmac(_hmac(_hmac(f"AWS4{secret}".encode(), date), region), SERVICE), "aws4_request")
    return hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()


def verify(keys, region, method, raw_path, raw_query, headers, body, now=None):
    """The principal of a correctly signed request, else raises Refused. `headers` maps
    lower-cased names to values as they arrived."""
    m = _CREDENTIAL.match(headers.get("authorization", ""))
    if not m:
        raise Refused("Forbidden")
    key_id, date, scope_region, service, signed_list, sent = m.groups()
    signed = signed_list.split(";")
    if key_id not in keys:
        raise Refused("The security token included in the request is invalid.")
    if service != SERVICE or scope_region != region:
        raise Refused(f"Credential should be scoped to a valid region, not '{scope_region}'. "
                      if scope_region != region else f"Credential should be scoped to correct service: '{SERVICE}'. ")
    if "host" not in signed or signed != sorted(signed):
        raise Refused("'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization.")
    amz_date = headers.get("x-amz-date", "")
    if "x-amz-date" not in signed or not re.fullmatch(r"\d{8}T\d{6}Z", amz_date):
        raise Refused("Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.")
    if amz_date[:8] != date:
        raise Refused(f"Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: "
                      f"'{date}' != '{amz_date[:8]}', from '{amz_date}'.")
    at = calendar.timegm(time.strptime(amz_date, "%Y%m%dT%H%M%SZ"))
    now = time.time() if now is None else now
    if abs(now - at) > MAX_SKEW_S:
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now))
        raise Refused(f"Signature expired: {amz_date} is now earlier than "
                      f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime(now - MAX_SKEW_S))} ({stamp} - 5 min.)"
                      if at < now else
                      f"Signature not yet current: {amz_date} is still later than "
                      f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime(now + MAX_SKEW_S))} ({stamp} + 5 min.)")
    secret, principal = keys[key_id]
    canonical = canonical_request(method, raw_path, raw_query, headers, signed, body)
    if not hmac.compare_digest(signature(secret, date, region, amz_date, canonical), sent):
        raise Refused(MISMATCH)
    return principal


def parse_keys(specs):
    """`ID:SECRET:PRINCIPAL` strings (the stack's `--access-key`) as `verify`'s keys."""
    keys = {}
    for spec in specs:
        key_id, secret, principal = spec.split(":", 2)
        keys[key_id] = (secret, principal)
    return keys
