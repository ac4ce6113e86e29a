"""The stream event source mappings: the table's stream and Kinesis polled and handed to
their functions in batches, with `batchItemFailures`, retries and the on-failure
destination as Lambda plays them.
"""
import base64
import datetime
import http.client
import json
import threading
import time
import urllib.parse
import uuid

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from base import log


class JsonApi:
    """An AWS JSON-protocol API called without boto3's model: each request signed with
    botocore's SigV4 signer, each reply's JSON handed back as it came. Under load,
    botocore's model-driven parse of a busy stream's records (which the event then
    re-encodes, since Lambda's event carries their wire form anyway) was the largest
    share of the shim's CPU."""

    def __init__(self, endpoint, signing_name, target_prefix, timeout=10):
        url = urllib.parse.urlsplit(endpoint)
        self.https = url.scheme == "https"
        self.netloc = url.netloc
        self.url = f"{url.scheme}://{url.netloc}/"
        self.signer = SigV4Auth(Credentials("local", "local"), signing_name, "us-east-1")
        self.prefix = target_prefix
        self.timeout = timeout
        self.local = threading.local()

    def _connection(self):
        conn = getattr(self.local, "conn", None)
        if conn is None:
            cls = http.client.HTTPSConnection if self.https else http.client.HTTPConnection
            conn = self.local.conn = cls(self.netloc, timeout=self.timeout)
        return conn

    def call(self, action, payload):
        body = json.dumps(payload).encode()
        request = AWSRequest("POST", self.url, data=body, headers={
            "Content-Type": "application/x-amz-json-1.0",
            "X-Amz-Target": f"{self.prefix}.{action}",
        })
        self.signer.add_auth(request)
        headers = dict(request.headers.items())
        for attempt in (1, 2):
            conn = self._connection()
            try:
                conn.request("POST", "/", body, headers)
                reply = conn.getresponse()
                data = reply.read()
                break
            except (OSError, http.client.HTTPException):
                # A kept-alive connection the endpoint closed (or a restarted endpoint):
                # one more try on a new connection.
                conn.close()
                self.local.conn = None
                if attempt == 2:
                    raise
        if reply.status != 200:
            raise RuntimeError(f"{action}: HTTP {reply.status}: {data[:300]!r}")
        return json.loads(data)


class TableStream:
    """The table's DynamoDB stream, as a stream mapping reads it (records kept in their
    wire form: that is what Lambda's event carries)."""

    info_key = "DDBStreamBatchInfo"

    def __init__(self, dynamodb, streams, table):
        self.dynamodb, self.streams, self.table = dynamodb, streams, table

    def arn(self):
        return self.dynamodb.describe_table(TableName=self.table)["Table"].get("LatestStreamArn")

    def shards(self, arn):
        reply = self.streams.call("DescribeStream", {"StreamArn": arn})
        return [s["ShardId"] for s in reply["StreamDescription"]["Shards"]]

    def read(self, arn, sid, after, limit):
        # A fresh iterator on every poll: moto's shard objects may be replaced.
        where = ({"ShardIteratorType": "AFTER_SEQUENCE_NUMBER", "SequenceNumber": after} if after
                 else {"ShardIteratorType": "TRIM_HORIZON"})
        it = self.streams.call("GetShardIterator", {"StreamArn": arn, "ShardId": sid, **where})["ShardIterator"]
        return self.streams.call("GetRecords", {"ShardIterator": it, "Limit": limit})["Records"]

    @staticmethod
    def seq(r):
        return r["dynamodb"]["SequenceNumber"]

    @staticmethod
    def arrival(r):
        # Epoch seconds, as the JSON protocol writes it.
        t = r["dynamodb"].get("ApproximateCreationDateTime")
        return datetime.datetime.fromtimestamp(t, datetime.timezone.utc) if isinstance(t, (int, float)) else None

    def event(self, arn, sid, records):
        return {"Records": [{**r, "eventSourceARN": arn} for r in records]}


class KinesisStream:
    """A Kinesis data stream (moto's), as a stream mapping reads it: records handed over
    as Lambda's Kinesis event."""

    info_key = "KinesisBatchInfo"

    def __init__(self, kinesis, name):
        self.kinesis, self.name = kinesis, name

    def arn(self):
        return self.kinesis.describe_stream_summary(StreamName=self.name)["StreamDescriptionSummary"]["StreamARN"]

    def shards(self, arn):
        return [s["ShardId"] for s in self.kinesis.list_shards(StreamName=self.name)["Shards"]]

    def read(self, arn, sid, after, limit):
        where = ({"ShardIteratorType": "AFTER_SEQUENCE_NUMBER", "StartingSequenceNumber": after} if after
                 else {"ShardIteratorType": "TRIM_HORIZON"})
        it = self.kinesis.get_shard_iterator(StreamName=self.name, ShardId=sid, **where)["ShardIterator"]
        return self.kinesis.get_records(ShardIterator=it, Limit=limit)["Records"]

    @staticmethod
    def seq(r):
        return r["SequenceNumber"]

    @staticmethod
    def arrival(r):
        t = r.get("ApproximateArrivalTimestamp")
        return t if isinstance(t, datetime.datetime) else None

    def event(self, arn, sid, records):
        def one(r):
            t = self.arrival(r)
            return {
                "kinesis": {
                    "kinesisSchemaVersion": "1.0",
                    "partitionKey": r["PartitionKey"],
                    "sequenceNumber": r["SequenceNumber"],
                    "data": base64.b64encode(r["Data"]).decode(),
                    "approximateArrivalTimestamp": t.timestamp() if t else time.time(),
                    "encryptionType": "NONE",
                },
                "eventSource": "aws:kinesis",
                "eventVersion": "1.0",
                "eventID": f"{sid}:{r['SequenceNumber']}",
                "eventName": "aws:kinesis:record",
                "invokeIdentityArn": "arn:aws:iam::000000000000:role/local",
                "awsRegion": "us-east-1",
                "eventSourceARN": arn,
            }
        return {"Records": [one(r) for r in records]}


class StreamPoller:
    """Plays the event source mapping of one function over a stream (the table's, or a
    Kinesis stream): shards polled in order from their start."""

    def __init__(self, host, mapping, stream, interval, destination):
        self.host = host
        self.stream = stream
        self.batch_size = int(mapping.get("BatchSize", 100))
        self.report_failures = "ReportBatchItemFailures" in mapping.get("FunctionResponseTypes", [])
        self.max_retries = int(mapping.get("MaximumRetryAttempts", -1))
        self.bisect = bool(mapping.get("BisectBatchOnFunctionError", False))
        self.interval = interval
        # (send, url): where exhausted batches go (the on-failure destination queue).
        self.destination = destination
        self.cursor = {}  # shard id -> last sequence number handed over for good
        self.stopped = threading.Event()
        self.stats = {"batches": 0, "records": 0, "retries": 0, "discarded": 0}

    def start(self):
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        arn = None
        while not self.stopped.is_set():
            try:
                arn = arn or self.stream.arn()
                moved = self._poll(arn) if arn else False
            except Exception as e:  # the endpoint may be restarting: keep trying
                log("stream poll failed", error=repr(e))
                arn, moved = None, False
                self.stopped.wait(1)
            if not moved:
                self.stopped.wait(self.interval)

    def _poll(self, arn):
        moved = False
        for sid in self.stream.shards(arn):
            records = self.stream.read(arn, sid, self.cursor.get(sid), self.batch_size)
            if records:
                self._deliver(arn, sid, records)
                moved = True
        return moved

    def _deliver(self, arn, sid, records):
        attempts = 0
        seq = self.stream.seq
        while records and not self.stopped.is_set():
            result, error = self.host.invoke(self.stream.event(arn, sid, records))
            self.stats["batches"] += 1
            failed_at = self._first_failure(records, result, error)
            if failed_at is None:
                self.cursor[sid] = seq(records[-1])
                self.stats["records"] += len(records)
                return
            # Everything before the first failure is done; retry from it, in order.
            if failed_at > 0:
                self.cursor[sid] = seq(records[failed_at - 1])
                self.stats["records"] += failed_at
                records, attempts = records[failed_at:], 0
                continue
            attempts += 1
            self.stats["retries"] += 1
            if error is not None and self.bisect and len(records) > 1:
                # BisectBatchOnFunctionError: each half is retried on its own, in order,
                # so one poison record cannot hold the good ones back.
                mid = len(records) // 2
                self._deliver(arn, sid, records[:mid])
                self._deliver(arn, sid, records[mid:])
                return
            if 0 <= self.max_retries < attempts:
                self._discard(arn, sid, records, error or result, attempts)
                return
            self.stopped.wait(min(0.05 * 2**attempts, 2))

    def _first_failure(self, records, result, error):
        if error is not None:
            log("stream batch invocation failed; retrying it", function=self.host.name, error=error)
            return 0
        if not self.report_failures:
            return None
        try:
            failures = json.loads(result).get("batchItemFailures") or []
        except (ValueError, AttributeError):
            log("stream batch answered something unreadable; retrying it", function=self.host.name)
            return 0
        if not failures:
            return None
        ids = {f.get("itemIdentifier") for f in failures}
        seqs = [self.stream.seq(r) for r in records]
        positions = [seqs.index(i) for i in ids if i in seqs]
        # A failure naming no record of the batch fails the whole batch, as Lambda does.
        return min(positions) if positions and len(positions) == len(ids) else 0

    def _discard(self, arn, sid, records, why, attempts):
        seq = self.stream.seq
        self.cursor[sid] = seq(records[-1])
        self.stats["discarded"] += len(records)
        record = on_failure_record(self.host.name, arn, sid, records, why, attempts, self.stream)
        if self.destination is None:
            log("batch given up on, with no on-failure destination", record=record)
            return
        send, url = self.destination
        send(url, json.dumps(record))
        log("batch sent to the on-failure destination", count=len(records), queue=url,
            first=seq(records[0]), last=seq(records[-1]))


def on_failure_record(function, arn, sid, records, why, attempts, stream):
    """What Lambda sends an on-failure destination for a stream batch (shard and
    sequence range)."""
    now = datetime.datetime.now(datetime.timezone.utc)

    def arrival(r):
        return (stream.arrival(r) or now).strftime("%Y-%m-%dT%H:%M:%SZ")

    return failure_record(function, why, attempts, stream.info_key, {
        "shardId": sid,
        "startSequenceNumber": stream.seq(records[0]),
        "endSequenceNumber": stream.seq(records[-1]),
        "approximateArrivalOfFirstRecord": arrival(records[0]),
        "approximateArrivalOfLastRecord": arrival(records[-1]),
        "batchSize": len(records),
        "streamArn": arn,
    })


def failure_record(function, why, attempts, info_key, info):
    """Lambda's on-failure record for a batch given up on: the invocation's context and
    the source's batch info (its range, never the records)."""
    now = datetime.datetime.now(datetime.timezone.utc)
    return {
        "requestContext": {
            "requestId": str(uuid.uuid4()),
            "functionArn": f"arn:aws:lambda:us-east-1:000000000000:function:{function}",
            "condition": "RetryAttemptsExhausted",
            "approximateInvokeCount": attempts,
        },
        "responseContext": {"statusCode": 200, "executedVersion": "$LATEST", "functionError": str(why)[:200]},
        "version": "1.0",
        "timestamp": now.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z",
        info_key: info,
    }
