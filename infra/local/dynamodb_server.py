"""DynamoDB + DynamoDB Streams endpoint of the local stack: moto's server, made atomic
(it serves the stack's SQS, EventBridge, SNS, Kinesis, ElastiCache and S3 as well).

`moto_server` serves every request on its own thread with no isolation, and its
TransactWriteItems deep-copies whole tables and puts the copy back when a transaction is
cancelled. Under concurrent clients that loses other requests' writes and leaves open
stream iterators on a detached shard. Real DynamoDB makes each request atomic, and the
ingest path relies on that (conditional transactions are its idempotency guarantee).

So this runs moto's own WSGI application with these changes:
- one lock around each request, so every request is atomic (a serializable DynamoDB);
  DynamoDB Streams reads are the exception: they only read immutable records;
- TransactWriteItems evaluates every condition first and writes only when all hold,
  so a cancelled transaction has nothing to roll back;
- rules' API-destination targets (the template's webhooks) are delivered as EventBridge
  delivers them: body, auth header, retries, dead letters, rate limit (webhooks.py);
- requests signed with a function's access key (`fn-<LogicalId>`, what stack.py gives
  each function) must be allowed by that function's execution role in the template
  (iam.py), or get DynamoDB's AccessDeniedException, as in AWS;
- a query reads the one partition its key condition names (moto walks, and sorts, every
  item of the table for each query, of the table or of an index keyed on its partition
  key), and lends its results to the reply instead of deep-copying them (a quarter of a
  query's time: a degraded read's 32 counted queries on a 10,000-player board held the
  endpoint for seconds); the reply is written before the request lets go of the lock,
  and nothing on its way changes an item; an index's items are sorted by their keys'
  plain values (moto compared DynamoType objects, a third of a query's time);
- the lock hands the endpoint to waiting requests in arrival order (a plain lock let one
  request wait seconds behind a stream of later ones);
- item results (GetItem, Query, Scan, BatchGetItem, ...) and stream records are answered
  as plain JSON: they are JSON-ready already, and moto's model-driven serializer spends
  about a millisecond on each item (a 1,000-record GetRecords took 0.9 s, a 1,000-item
  Query 1.7 s of the process's CPU, stalling every other request);
- connections are kept alive (waitress; werkzeug's server closed each after its request,
  so every SDK call paid a connect and a thread start), and moto's per-request lookups of
  which backend serves a host and which actions a handler has are remembered: about a
  third less CPU per request;
- what has lived a second is frozen out of the garbage collector's view (`gc.freeze()`
  once a second): the tables are millions of long-lived objects, and each full
  collection walked them all with every request waiting (about 0.4 s per 100,000 items
  and their stream records, so a load run's growing tables stalled the endpoint for
  seconds at a time, and the stack never caught up).

With `--state-file`, the tables (items, indexes, streams) are saved there on SIGTERM and
loaded at start, so the endpoint can be restarted like a real service without losing
data (fault tests restart it mid-load). SIGKILL saves nothing, as a crash would.

Usage: dynamodb_server.py [--host 127.0.0.1] [--port 8000] [--state-file PATH]
                          [--template template.yaml]
"""

import argparse
import base64
import collections
import copy
import datetime
import decimal
import functools
import gc
import io
import inspect
import json
import os
import pickle
import re
import signal
import sys
import threading
import time
import urllib.parse

# Exports' parts from 16 KiB (S3 takes 5 MiB but for the last), so the tests write a
# file in several parts from a board of a few hundred players; read by moto at import.
os.environ.setdefault("S3_UPLOAD_PART_MIN_SIZE", "16384")

from moto.core import responses as moto_responses
from moto.dynamodb.comparisons import get_filter_expression
from moto.dynamodb.exceptions import (
    MultipleTransactionsException,
    TooManyTransactionsException,
    TransactionCanceledException,
    TransactWriteSingleOpException,
)
from moto.dynamodb.models import DynamoDBBackend, dynamodb_backends
from moto.dynamodb.models import table as table_module
from moto.dynamodb.models.dynamo_type import Item, LimitedSizeDict
from moto.dynamodb.models.table import SecondaryIndex, Table
from moto.dynamodb.responses import DynamoResult
from moto.dynamodbstreams.responses import DynamoDBStreamsHandler
from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    create_backend_app,
)
import waitress

import iam
import webhooks

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STREAMS_TARGET = "DynamoDBStreams_"
# Requests slower than this are logged (the endpoint serialises requests: one slow
# request delays every other).
SLOW_REQUEST_S = 0.5


def _item_key(table, op_type, op):
    if op_type != "Put":
        return op["Key"]
    attrs = op["Item"]
    key = {table.hash_key_attr: attrs[table.hash_key_attr]}
    if table.range_key_attr is not None:
        key[table.range_key_attr] = attrs[table.range_key_attr]
    return key


def transact_write_items(self, transact_items):
    """All-or-nothing without rollback: check every condition, then write."""
    if len(transact_items) > 100:
        raise TooManyTransactionsException()
    planned, reasons, seen = [], [], set()
    for entry in transact_items:
        if len(entry) != 1:
            raise TransactWriteSingleOpException()
        op_type, op = next(iter(entry.items()))
        table_name = op["TableName"]
        key = _item_key(self.get_table(table_name), op_type, op)
        ident = (table_name, repr(sorted(key.items())))
        if ident in seen:
            raise MultipleTransactionsException()
        seen.add(ident)
        reason = (None, None, None)
        condition = op.get("ConditionExpression")
        if condition is not None:
            current = self.get_item(table_name, key)
            check = get_filter_expression(
                condition,
                op.get("ExpressionAttributeNames"),
                op.get("ExpressionAttributeValues"),
            )
            if not check.expr(current):
                old = None
                if current is not None and op.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD":
                    old = current.to_json()["Attributes"]
                reason = ("ConditionalCheckFailed", "The conditional request failed", old)
        reasons.append(reason)
        planned.append((op_type, op, key))
    if any(code is not None for code, _, _ in reasons):
        raise TransactionCanceledException(reasons)
    for op_type, op, key in planned:
        names = op.get("ExpressionAttributeNames")
        values = op.get("ExpressionAttributeValues")
        if op_type == "Put":
            self.put_item(op["TableName"], op["Item"])
        elif op_type == "Delete":
            self.delete_item(op["TableName"], key)
        elif op_type == "Update":
            self.update_item(op["TableName"], key, op["UpdateExpression"], names, values)


_table_query = Table.query
_QUERY_PARAMS = inspect.signature(_table_query)


def partition_query(self, hash_key, *args, **kwargs):
    """Table.query searching only the partition the key condition names (the table's, or
    an index's keyed on the table's own partition key): the same items, found without
    walking and sorting the whole table. Requests are serialised, so lending the query a
    narrower `all_items` is safe."""
    # moto's own caller passes the index's name by position (the 8th parameter).
    index_name = _QUERY_PARAMS.bind(self, hash_key, *args, **kwargs).arguments.get("index_name")
    if index_name:
        index = next((i for i in self.all_indexes() if i.name == index_name), None)
        hashes = [k["AttributeName"] for k in index.schema if k["KeyType"] == "HASH"] if index else []
        if hashes != [self.hash_key_attr]:
            return _table_query(self, hash_key, *args, **kwargs)
    if hash_key is None:
        return _table_query(self, hash_key, *args, **kwargs)
    partition = self.items.get(hash_key, {})
    items = sorted(partition.values(), key=lambda x: (x.hash_key, x.range_key))
    self.all_items = lambda: items
    table_module.copy = Lent
    try:
        return _table_query(self, hash_key, *args, **kwargs)
    finally:
        table_module.copy = copy
        del self.all_items


def sorted_by_plain_keys(self, hash_key_attrs, range_key_attrs, items):
    """Table.sorted_items with the keys' plain values (a string, a number) compared
    instead of moto's DynamoType objects: the same order, a key attribute having one type."""
    attrs = self._generate_attr_to_sort_by(hash_key_attrs, range_key_attrs)
    items.sort(key=lambda x: tuple(x.attrs[k].cast_value for k in attrs))
    return items


def project_by_name(self, item):
    """SecondaryIndex.project naming the kept attributes (top level, as an index's key
    and included attributes are): moto turned each item into plain JSON and back to
    project it, a quarter of the endpoint's CPU when degraded reads count ranks. The
    projected item shares the stored values, which nothing changes before the reply is
    written (see `Lent`)."""
    kind = (self.projection or {}).get("ProjectionType")
    if kind not in ("KEYS_ONLY", "INCLUDE"):
        return item
    kept = self.table_key_attrs + self.schema_key_attrs
    if kind == "INCLUDE":
        kept = kept + self.projection.get("NonKeyAttributes", [])
    projected = Item.__new__(Item)
    projected.hash_key, projected.range_key = item.hash_key, item.range_key
    projected.attrs = LimitedSizeDict.__new__(LimitedSizeDict)
    for name in kept:
        if name in item.attrs:
            dict.__setitem__(projected.attrs, name, item.attrs[name])
    return projected


class Lent:
    """`copy` as moto's Table.query sees it while a partition query runs: the results
    are lent to the reply (a new list of the same items), not deep-copied."""

    copy = staticmethod(copy.copy)

    @staticmethod
    def deepcopy(results, memo=None):
        return list(results)


JSON_HEADERS = {"Content-Type": "application/x-amz-json-1.0"}


def _plain(value):
    """What json.dumps cannot write itself, as the JSON protocol writes it."""
    if isinstance(value, datetime.datetime):
        return value.timestamp()
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode()
    if isinstance(value, decimal.Decimal):
        return str(value)
    raise TypeError(f"not JSON: {value!r}")


def get_records(self):
    """DynamoDB Streams GetRecords, written with json.dumps."""
    result = self.backend.get_records(self._get_param("ShardIterator"), self._get_param("Limit") or 1000)
    return 200, JSON_HEADERS, json.dumps(result, default=_plain)


def plain_result(self, context):
    """A DynamoDB item result (already plain DynamoDB JSON), written with json.dumps."""
    result = {k: v for k, v in self.result.items() if v is not None}
    return 200, JSON_HEADERS, json.dumps(result, default=_plain)


class Dispatcher(DomainDispatcherApplication):
    """moto's dispatcher, remembering which backend serves a host: it walked moto's
    package directory and about 200 URL patterns on every request (a fifth of a
    request's time)."""

    def __init__(self, create_app):
        super().__init__(create_app)
        self._backends = {}

    def get_backend_for_host(self, host):  # called under the dispatcher's lock
        if host not in self._backends:
            self._backends[host] = super().get_backend_for_host(host)
        return self._backends[host]


class FairLock:
    """A lock granted in arrival order. `threading.Lock` is not fair: under a stream of
    requests one waiter (a queue poll, say) could lose the race again and again."""

    def __init__(self):
        self._mutex = threading.Lock()
        self._waiting = collections.deque()
        self._held = False

    def acquire(self):
        with self._mutex:
            if not self._held and not self._waiting:
                self._held = True
                return
            turn = threading.Event()
            self._waiting.append(turn)
        turn.wait()  # handed over by release(): held stays True

    def release(self):
        with self._mutex:
            if self._waiting:
                self._waiting.popleft().set()
            else:
                self._held = False

    def __enter__(self):
        self.acquire()

    def __exit__(self, *_):
        self.release()


def _unoffered_elasticache_action(environ):
    """The Action of an ElastiCache request that moto does not implement, else None."""
    if "/elasticache/aws4_request" not in environ.get("HTTP_AUTHORIZATION", ""):
        return None
    from moto.elasticache.responses import ElastiCacheResponse

    body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
    environ["wsgi.input"] = io.BytesIO(body)
    action = (urllib.parse.parse_qs(body.decode("utf-8", "replace")).get("Action") or [""])[0]
    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", action).lower()
    return None if hasattr(ElastiCacheResponse, snake) else action


class Serialized:
    """WSGI middleware: one request at a time through the wrapped application, after the
    calling function's role allowed it."""

    def __init__(self, app, roles):
        self.app = app
        self.roles = roles
        self.lock = FairLock()

    def __call__(self, environ, start_response):
        function = iam.function_of(environ.get("HTTP_AUTHORIZATION"), environ.get("QUERY_STRING"))
        if function is not None:
            body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
            environ["wsgi.input"] = io.BytesIO(body)
            target = environ.get("HTTP_X_AMZ_TARGET", "")
            if iam.is_s3(environ):
                wanted = iam.s3_accesses(environ["REQUEST_METHOD"], environ.get("PATH_INFO", ""),
                                         environ.get("QUERY_STRING", ""))
            elif target:
                wanted = iam.accesses(target, json.loads(body or b"{}"), self.roles.hash_key,
                                      self.roles.index_hash_keys)
            else:  # the Query protocol (ElastiCache): a form naming its Action
                wanted = iam.query_accesses(urllib.parse.parse_qs(body.decode("utf-8", "replace")))
            access = self.roles.denied(function, wanted)
            if access is not None:
                print(f"denied {function}: {access}", file=sys.stderr, flush=True)
                if access.service == "s3":
                    start_response("403 Forbidden", [("Content-Type", "application/xml")])
                    return [f"<Error><Code>AccessDenied</Code><Message>{access}</Message></Error>".encode()]
                if not target:
                    start_response("403 Forbidden", [("Content-Type", "text/xml")])
                    return [f"<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code><Message>{access}"
                            "</Message></Error></ErrorResponse>".encode()]
                start_response("400 Bad Request", [("Content-Type", "application/x-amz-json-1.0")])
                return [iam.denial(function, access)]
        unoffered = _unoffered_elasticache_action(environ)
        if unoffered:
            # moto answers an action it lacks with a bare 500, which the SDKs retry;
            # AWS's answer to an action a service does not know is a 400.
            start_response("400 Bad Request", [("Content-Type", "text/xml")])
            return [f"<ErrorResponse><Error><Type>Sender</Type><Code>InvalidAction</Code><Message>{unoffered} "
                    "is not offered by the local control plane (moto)</Message></Error></ErrorResponse>".encode()]
        target = environ.get("HTTP_X_AMZ_TARGET", "")
        if target.startswith(STREAMS_TARGET):
            # Stream records are immutable once written (moto appends them to a list),
            # so reading them needs no isolation; serialising a large GetRecords reply
            # takes moto ~1 ms per record, which under the lock would stall every write.
            return list(self.app(environ, start_response))
        asked = time.monotonic()
        with self.lock:
            got = time.monotonic()
            try:
                return list(self.app(environ, start_response))
            finally:
                held = time.monotonic() - got
                if held > SLOW_REQUEST_S:
                    print(f"slow request: {target} held the lock {held:.2f} s (waited {got - asked:.2f} s)",
                          file=sys.stderr, flush=True)


def save_state_and_exit(path, lock):
    """Pickles every account's and region's tables and exits while still holding the
    request lock, so no request can be acknowledged after the snapshot was taken."""
    lock.acquire()
    state = {
        (account, region): backend.tables
        for account, regions in dynamodb_backends.items()
        for region, backend in regions.items()
        if backend.tables
    }
    tmp = f"{path}.tmp"
    with open(tmp, "wb") as f:
        pickle.dump(state, f)
    os.replace(tmp, path)
    os._exit(0)


def load_state(path):
    if not os.path.exists(path):
        return
    with open(path, "rb") as f:
        state = pickle.load(f)  # noqa: S301 - our own file
    for (account, region), tables in state.items():
        dynamodb_backends[account][region].tables = tables


def freeze_survivors(every_s=1.0):
    """Moves every object that has lived `every_s` into the permanent generation, which
    collections skip: a full collection then walks only the last second's objects, not
    the tables. What little cyclic garbage is frozen with them is never freed; requests'
    own garbage is freed by reference counting or the young collections first."""
    while True:
        time.sleep(every_s)
        gc.freeze()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--state-file", default=None)
    parser.add_argument("--template", default=os.path.join(ROOT, "template.yaml"),
                        help="whose functions' roles are enforced")
    args = parser.parse_args()
    roles = iam.load(args.template)
    DynamoDBBackend.transact_write_items = transact_write_items
    DynamoDBStreamsHandler.get_records = get_records
    DynamoResult.execute_result = plain_result
    Table.query = partition_query
    Table.sorted_items = sorted_by_plain_keys
    SecondaryIndex.project = project_by_name
    # A handler class's action names, listed with inspect.getmembers on every request.
    moto_responses.method_names_from_class = functools.cache(moto_responses.method_names_from_class)
    # The event bus's API destinations deliver as EventBridge's do (webhooks.py).
    webhooks.install(args.port)
    app = Serialized(Dispatcher(create_backend_app), roles)
    if args.state_file:
        load_state(args.state_file)

    def stop(*_):
        if args.state_file:
            save_state_and_exit(args.state_file, app.lock)
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    threading.Thread(target=freeze_survivors, daemon=True).start()
    # Keep-alive connections, as DynamoDB serves them: werkzeug's server closes each one
    # after its request, so every SDK call paid a connect and a thread start. Threads
    # enough that stream reads (which take no lock) never queue behind requests waiting
    # for the lock.
    waitress.serve(app, host=args.host, port=args.port, threads=64, connection_limit=2000,
                   channel_timeout=300, backlog=1024, asyncore_use_poll=True, ident="dynamodb-local",
                   _quiet=True)


if __name__ == "__main__":
    main()
