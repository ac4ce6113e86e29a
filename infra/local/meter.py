"""A DynamoDB bill meter: an HTTP proxy in front of a DynamoDB-API endpoint that forwards
every call unchanged and adds up the read and write units DynamoDB would bill for it,
from the items actually sent and stored (not from what the caller says it does).

How it prices a call (docs.aws.amazon.com/amazondynamodb/latest/developerguide/
CapacityUnitCalculations.html and read-write-operations.html):

- item size: each attribute's name (UTF-8 bytes) plus its value: a string's UTF-8 bytes,
  a number's significant digits / 2 + 1, a binary's raw bytes, 1 for a boolean or null,
  3 for a list or map plus 1 and the size of each element (a map element also its key);
- a write: the larger of the item before and after, in 1 KB units (at least 1); a
  transaction's item (a ConditionCheck too) twice that; a write whose condition failed
  still 1 unit, and a cancelled transaction is billed as if it wrote (an upper bound);
- each global secondary index: one unit when an entry is added, removed or rewritten
  with other projected values, two when its key changes (a delete and a put);
- a read: the item in 4 KB units (at least 1), half for an eventually consistent read,
  twice for a transactional one; a Query the sum of the items it read, rounded once.

To see an item before and after a write the meter reads it itself (unbilled), so it
serializes the calls it forwards: meter a workload, not a load test.

Endpoints of its own: `GET /__meter` (the totals so far, per operation too) and
`POST /__meter/reset`.

It also breaks calls on purpose, for the crash tests (tests/e2e/crash.rs): `POST
/__meter/fault` with `{"op": "PutItem", "pk_prefix": "S#", "skip": 0, "mode": ...}` arms
one fault for the `skip + 1`-th call of `op` on an item whose partition key starts with
`pk_prefix`:
- `"before"`: the call is not forwarded (a crash before the write);
- `"after"`: it is forwarded and its reply replaced (a crash after the write: the write
  stands, the caller never hears);
- `"hold"`: it waits, unforwarded and outside the meter's lock, until `POST
  /__meter/release`, then goes on (a writer paused between its reads and its write).
The broken reply is a 400 `ValidationException`, which the AWS SDKs do not retry, so the
caller sees the crash. `GET /__meter/fault` says whether the fault has fired
(`{"fired": n}`, and `"held": true` while a call waits).

Usage: meter.py --upstream http://127.0.0.1:8000 [--port 0]  (prints `READY <port>`)
"""

import argparse
import base64
import json
import math
import threading
import urllib.error
import urllib.request
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TARGET = "DynamoDB_20120810."


def number_size(raw):
    digits = raw.lstrip("+-").replace(".", "")
    if "e" in digits.lower():
        digits = format(Decimal(raw).normalize(), "f").lstrip("+-").replace(".", "")
    digits = digits.strip("0") or "0"
    return (len(digits) + 1) // 2 + 1


def value_size(value):
    (kind, v), = value.items()
    if kind == "S":
        return len(v.encode())
    if kind == "N":
        return number_size(v)
    if kind == "B":
        return len(base64.b64decode(v))
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "SS":
        return sum(len(s.encode()) for s in v)
    if kind == "NS":
        return sum(number_size(n) for n in v)
    if kind == "BS":
        return sum(len(base64.b64decode(b)) for b in v)
    if kind == "L":
        return 3 + sum(1 + value_size(e) for e in v)
    if kind == "M":
        return 3 + sum(1 + len(k.encode()) + value_size(e) for k, e in v.items())
    raise ValueError(f"unknown attribute type {kind}")


def item_size(item):
    """The bytes DynamoDB counts for an item (0 for no item)."""
    if not item:
        return 0
    return sum(len(name.encode()) + value_size(v) for name, v in item.items())


def write_units(before, after):
    return max(1, math.ceil(max(item_size(before), item_size(after)) / 1024))


def read_units(size, consistent):
    units = max(1, math.ceil(size / 4096))
    return units if consistent else units / 2


def index_units(index, before, after):
    """Writes to one global secondary index for an item going from `before` to `after`."""
    keys = index["keys"]

    def entry(item):
        if not item or any(k not in item for k in keys):
            return None
        attrs = keys + index["table_keys"] + index["projected"]
        return {k: item[k] for k in attrs if k in item}

    old, new = entry(before), entry(after)
    if old is None and new is None:
        return 0
    if old is None or new is None:
        return 1
    if any(old[k] != new[k] for k in keys):
        return 2
    return 0 if old == new else 1


class Meter:
    def __init__(self, upstream):
        self.upstream = upstream.rstrip("/")
        self.lock = threading.Lock()
        self.tables = {}
        self.reset()

    def reset(self):
        # cancelled_write_units: of write_units, what cancelled transactions and failed
        # conditions were billed (an upper bound: see the module's doc).
        self.totals = {"read_units": 0.0, "write_units": 0.0, "cancelled_write_units": 0.0,
                       "calls": 0, "by_operation": {}}

    def add(self, op, reads=0.0, writes=0.0):
        self.totals["read_units"] += reads
        self.totals["write_units"] += writes
        self.totals["calls"] += 1
        o = self.totals["by_operation"].setdefault(op, {"calls": 0, "read_units": 0.0, "write_units": 0.0})
        o["calls"] += 1
        o["read_units"] += reads
        o["write_units"] += writes

    def send(self, op, body, headers):
        return self.send_raw("/", json.dumps(body).encode(),
                             {**headers, "X-Amz-Target": TARGET + op,
                              "Content-Type": "application/x-amz-json-1.0"})

    def send_raw(self, path, raw, headers):
        headers = {k: v for k, v in headers.items() if k.lower() not in ("host", "content-length")}
        req = urllib.request.Request(self.upstream + path, data=raw, method="POST", headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def schema(self, table, headers):
        if table not in self.tables:
            _, raw = self.send("DescribeTable", {"TableName": table}, headers)
            t = json.loads(raw)["Table"]
            table_keys = [k["AttributeName"] for k in t["KeySchema"]]
            indexes = []
            for gsi in t.get("GlobalSecondaryIndexes", []):
                p = gsi.get("Projection", {})
                indexes.append({
                    "keys": [k["AttributeName"] for k in gsi["KeySchema"]],
                    "table_keys": table_keys,
                    # ALL projects everything: compare whole items (None = all).
                    "projected": p.get("NonKeyAttributes", []) if p.get("ProjectionType") != "ALL" else [],
                    "all": p.get("ProjectionType") == "ALL",
                })
            self.tables[table] = {"keys": table_keys, "indexes": indexes}
        return self.tables[table]

    def peek(self, table, key, headers):
        _, raw = self.send("GetItem", {"TableName": table, "Key": key, "ConsistentRead": True}, headers)
        return json.loads(raw).get("Item")

    def key_of(self, table, item, headers):
        return {k: item[k] for k in self.schema(table, headers)["keys"]}

    def write_bill(self, table, before, after, headers, factor):
        s = self.schema(table, headers)
        units = factor * write_units(before, after)
        for index in s["indexes"]:
            if index["all"]:
                index = {**index, "projected": sorted(set(before or {}) | set(after or {}))}
            units += index_units(index, before, after)
        return units

    def call(self, op, body, headers):
        """Forwards one call and bills it; returns the upstream's status and body."""
        with self.lock:
            return self._call(op, body, headers)

    def _call(self, op, body, headers):
        if op in ("PutItem", "UpdateItem", "DeleteItem"):
            table = body["TableName"]
            key = body["Key"] if "Key" in body else self.key_of(table, body["Item"], headers)
            before = self.peek(table, key, headers)
            status, raw = self.send(op, body, headers)
            if status == 200:
                after = self.peek(table, key, headers)
                self.add(op, writes=self.write_bill(table, before, after, headers, 1))
            else:
                self.add(op, writes=1)
                self.totals["cancelled_write_units"] += 1
            return status, raw
        if op == "TransactWriteItems":
            parts = []
            for t in body["TransactItems"]:
                (kind, spec), = t.items()
                table = spec["TableName"]
                key = spec["Key"] if "Key" in spec else self.key_of(table, spec["Item"], headers)
                parts.append((kind, table, key, self.peek(table, key, headers)))
            status, raw = self.send(op, body, headers)
            units = 0
            for kind, table, key, before in parts:
                after = self.peek(table, key, headers) if status == 200 else before
                if kind == "ConditionCheck":
                    units += 2 * write_units(before, before)
                else:
                    units += self.write_bill(table, before, after, headers, 2)
            self.add(op, writes=units)
            if status != 200:
                self.totals["cancelled_write_units"] += units
            return status, raw
        if op == "BatchWriteItem":
            units = 0
            pending = []
            for table, requests in body["RequestItems"].items():
                for r in requests:
                    if "PutRequest" in r:
                        key = self.key_of(table, r["PutRequest"]["Item"], headers)
                    else:
                        key = r["DeleteRequest"]["Key"]
                    pending.append((table, key, self.peek(table, key, headers)))
            status, raw = self.send(op, body, headers)
            for table, key, before in pending:
                units += self.write_bill(table, before, self.peek(table, key, headers), headers, 1)
            self.add(op, writes=units)
            return status, raw
        status, raw = self.send(op, body, headers)
        if status == 200:
            self.add(op, reads=self.read_bill(op, body, json.loads(raw)))
        return status, raw

    @staticmethod
    def read_bill(op, body, reply):
        if op == "GetItem":
            return read_units(item_size(reply.get("Item")), body.get("ConsistentRead", False))
        if op == "BatchGetItem":
            units = 0
            for table, spec in body["RequestItems"].items():
                found = reply.get("Responses", {}).get(table, [])
                consistent = spec.get("ConsistentRead", False)
                units += sum(read_units(item_size(i), consistent) for i in found)
                units += read_units(0, consistent) * (len(spec["Keys"]) - len(found))
            return units
        if op in ("Query", "Scan"):
            size = sum(item_size(i) for i in reply.get("Items", []))
            return read_units(size, body.get("ConsistentRead", False))
        if op == "TransactGetItems":
            return sum(2 * read_units(item_size(r.get("Item")), True) for r in reply.get("Responses", []))
        return 0


class Fault:
    """One armed crash (see the module's doc)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.spec = None
        self.seen = 0
        self.fired = 0
        self.held = False
        self.release = threading.Event()

    def arm(self, spec):
        with self.lock:
            self.spec, self.seen, self.fired, self.held = spec, 0, 0, False
            self.release.clear()

    def state(self):
        with self.lock:
            return {"fired": self.fired, "held": self.held}

    def match(self, op, body):
        """The mode to break this call with, or None (and counts the call)."""
        with self.lock:
            spec = self.spec
            if spec is None or spec.get("op") != op:
                return None
            pk = partition_key(body)
            if not pk.startswith(spec.get("pk_prefix", "")):
                return None
            self.seen += 1
            if self.seen != spec.get("skip", 0) + 1:
                return None
            self.fired += 1
            self.spec = None
            if spec["mode"] == "hold":
                self.held = True
            return spec["mode"]

    def wait(self):
        self.release.wait(timeout=60)
        with self.lock:
            self.held = False


def partition_key(body):
    """The `pk` a single-item call names (a string key), or ""."""
    item = body.get("Key") or body.get("Item") or {}
    return item.get("pk", {}).get("S", "")


CRASH = json.dumps({"__type": "com.amazon.coral.validate#ValidationException",
                    "message": "injected crash (meter.py fault)"}).encode()


def handler_for(meter, fault=None):
    fault = fault or Fault()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_):
            pass

        def reply(self, status, raw, content_type="application/x-amz-json-1.0"):
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def do_GET(self):
            if self.path == "/__meter/fault":
                return self.reply(200, json.dumps(fault.state()).encode(), "application/json")
            if self.path == "/__meter":
                with meter.lock:
                    raw = json.dumps(meter.totals).encode()
                return self.reply(200, raw, "application/json")
            self.reply(404, b"{}", "application/json")

        def do_POST(self):
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.path == "/__meter/reset":
                with meter.lock:
                    meter.reset()
                return self.reply(204, b"")
            if self.path == "/__meter/fault":
                fault.arm(json.loads(raw))
                return self.reply(204, b"")
            if self.path == "/__meter/release":
                fault.release.set()
                return self.reply(204, b"")
            target = self.headers.get("X-Amz-Target", "")
            passed = {k: v for k, v in self.headers.items()
                      if k.lower() in ("authorization", "x-amz-date", "x-amz-security-token")}
            if not target.startswith(TARGET):
                # Streams and anything else: forwarded, not billed here.
                status, out = meter.send_raw(self.path, raw, dict(self.headers))
                return self.reply(status, out)
            op, body = target[len(TARGET):], json.loads(raw or b"{}")
            mode = fault.match(op, body)
            if mode == "before":
                return self.reply(400, CRASH)
            if mode == "hold":
                fault.wait()
            status, out = meter.call(op, body, passed)
            if mode == "after":
                return self.reply(400, CRASH)
            self.reply(status, out)

    return Handler


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--upstream", required=True)
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), handler_for(Meter(args.upstream)))
    print(f"READY {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
