"""ElastiCache's IAM authentication, locally: a TCP proxy in front of a redis-server that
takes `AUTH <user> <token>` as ElastiCache does, checking the token with botocore's own
SigV4 code (not ours), and passes everything else through unchanged.

A token is a presigned `GET http://<cache>/?Action=connect&User=<user>[&ResourceType=
ServerlessCache]` for service `elasticache`: it is accepted when its signature is the one
botocore computes with the key's secret at the token's own `X-Amz-Date`, its scope is that
date, the region and `elasticache`, it is not expired (`X-Amz-Expires`, at most 900 s),
and it names this cache and the user it authenticates. An accepted AUTH reaches the
server as the server's own password; a refused one as a wrong password, so the client
gets the server's refusal in order with its other replies.

Usage: elasticache_iam.py --listen PORT --upstream PORT --password P --cache NAME
       --region R --key ACCESS_KEY_ID=SECRET [--serverless]
Prints READY once listening; each AUTH's verdict goes to stdout as a JSON line.
"""
import argparse
import asyncio
import datetime
import json
import urllib.parse

from botocore.auth import SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

MAX_EXPIRES = 900


def verdict(token, user, opts, now=None):
    """None if `token` authenticates `user` to the cache, else why not."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    host, _, query = token.partition("/?")
    params = dict(urllib.parse.parse_qsl(query, keep_blank_values=True))
    if host != opts.cache:
        return f"the token is for cache {host!r}"
    if params.get("Action") != "connect" or params.get("User") != user:
        return "the token is not a connect for this user"
    if ("ResourceType" in params) != opts.serverless:
        return "the token's ResourceType does not match the cache"
    try:
        key, date, region, service, term = params["X-Amz-Credential"].split("/")
        signed_at = datetime.datetime.strptime(params["X-Amz-Date"], "%Y%m%dT%H%M%SZ").replace(
            tzinfo=datetime.timezone.utc)
        expires = int(params["X-Amz-Expires"])
        given = params["X-Amz-Signature"]
    except (KeyError, ValueError):
        return "the token is not a presigned request"
    if (date, region, service, term) != (signed_at.strftime("%Y%m%d"), opts.region, "elasticache", "aws4_request"):
        return "the token's scope is not this date, region and service"
    if expires > MAX_EXPIRES or not signed_at <= now <= signed_at + datetime.timedelta(seconds=expires):
        return "the token has expired"
    if key not in opts.keys:
        return "the token's key is unknown"
    # botocore signs the request again at the token's own time.
    unsigned = {k: v for k, v in params.items() if not k.startswith("X-Amz-")}
    url = f"http://{host}/?" + urllib.parse.urlencode(unsigned, quote_via=urllib.parse.quote)
    request = AWSRequest(method="GET", url=url)
    request.context["timestamp"] = params["X-Amz-Date"]
    auth = SigV4QueryAuth(Credentials(key, opts.keys[key], params.get("X-Amz-Security-Token")),
                          "elasticache", opts.region, expires=expires)
    auth._modify_request_before_signing(request)  # the X-Amz-* query parameters
    expected = auth.signature(auth.string_to_sign(request, auth.canonical_request(request)), request)
    if expected != given:
        return "the token's signature does not match"
    return None


async def read_command(reader):
    """One RESP array of bulk strings from the client: (raw bytes, [args])."""
    head = await reader.readline()
    if not head:
        return None, None
    if not head.startswith(b"*"):
        return head, None  # inline: passed through
    raw, args = bytearray(head), []
    for _ in range(int(head[1:].strip())):
        size_line = await reader.readline()
        data = await reader.readexactly(int(size_line[1:].strip()) + 2)
        raw += size_line + data
        args.append(bytes(data[:-2]))
    return bytes(raw), args


def resp(*args):
    out = f"*{len(args)}\r\n".encode()
    for a in args:
        a = a.encode() if isinstance(a, str) else a
        out += f"${len(a)}\r\n".encode() + a + b"\r\n"
    return out


async def serve(client_r, client_w, opts):
    up_r, up_w = await asyncio.open_connection("127.0.0.1", opts.upstream)

    async def back():
        while data := await up_r.read(65536):
            client_w.write(data)
            await client_w.drain()
        client_w.close()

    task = asyncio.create_task(back())
    try:
        while True:
            raw, args = await read_command(client_r)
            if raw is None:
                break
            if args and args[0].upper() == b"AUTH" and len(args) == 3:
                why = verdict(args[2].decode(), args[1].decode(), opts)
                print(json.dumps({"auth": args[1].decode(), "refused": why}), flush=True)
                raw = resp("AUTH", "default", opts.password if why is None else "refused-" + opts.password)
            up_w.write(raw)
            await up_w.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        up_w.close()
        task.cancel()


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--listen", type=int, required=True)
    p.add_argument("--upstream", type=int, required=True)
    p.add_argument("--password", required=True)
    p.add_argument("--cache", required=True)
    p.add_argument("--region", required=True)
    p.add_argument("--key", action="append", default=[])
    p.add_argument("--serverless", action="store_true")
    opts = p.parse_args()
    opts.keys = dict(k.split("=", 1) for k in opts.key)
    server = await asyncio.start_server(lambda r, w: serve(r, w, opts), "127.0.0.1", opts.listen)
    print("READY", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
