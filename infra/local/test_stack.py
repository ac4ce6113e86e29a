"""Tests of the local stack's parts: the event source mapping's retry semantics, the
Lambda service's queue (over its real Runtime API server), the template reading and the
IAM check's rules. Run by infra/test.sh (python -m unittest)."""

import concurrent.futures
import datetime
import http.client
import json
import os
import re
import sys
import tempfile
import threading
import time
import unittest

import base
import gateway
import httpd
import iam
import idp
import kafka_mapping
import lambda_host
import queue_mapping
import sigv4
import streams
import template


class FakeProjector:
    """Plays a projector: fails whole invocations containing `poison`, reports `partial`."""

    name = "Projector"

    def __init__(self, poison=(), partial=()):
        self.poison, self.partial, self.calls = set(poison), set(partial), []

    def invoke(self, payload):
        seqs = [r["dynamodb"]["SequenceNumber"] for r in payload["Records"]]
        self.calls.append(seqs)
        if self.poison & set(seqs):
            return None, "boom"
        failed = [{"itemIdentifier": s} for s in seqs if s in self.partial]
        self.partial -= set(seqs)  # a reported record succeeds when retried
        return json.dumps({"batchItemFailures": failed}).encode(), None


class Sent(list):
    """The on-failure destination: what was sent to it."""

    def __call__(self, url, body):
        self.append((url, json.loads(body)))


def poller(host, sent=None, **mapping):
    base = {"BatchSize": 10, "FunctionResponseTypes": ["ReportBatchItemFailures"], "MaximumRetryAttempts": 1}
    destination = (sent, "http://q/000000000000/t-RepairQueue") if sent is not None else None
    return streams.StreamPoller(host, {**base, **mapping}, streams.TableStream(None, None, "t"), 0.001, destination)


def records(n):
    return [{"dynamodb": {"SequenceNumber": str(i)}} for i in range(n)]


class StreamMappingTest(unittest.TestCase):
    def test_partial_failures_retry_from_the_first_failed_record_in_order(self):
        host = FakeProjector(partial={"2", "4"})
        p = poller(host)
        p._deliver("arn", "s", records(6))
        self.assertEqual(host.calls, [["0", "1", "2", "3", "4", "5"], ["2", "3", "4", "5"]])
        self.assertEqual(p.cursor["s"], "5")
        self.assertEqual(p.stats["discarded"], 0)

    def test_bisect_isolates_a_poison_record_and_sends_it_to_the_on_failure_destination(self):
        host = FakeProjector(poison={"3"})
        sent = Sent()
        p = poller(host, sent, BisectBatchOnFunctionError=True)
        p._deliver("arn:stream", "s", records(6))
        self.assertIn(["4", "5"], host.calls)
        self.assertEqual(p.cursor["s"], "5")
        self.assertEqual((p.stats["records"], p.stats["discarded"]), (5, 1))
        # Lambda's on-failure record: the shard and the range, not the records.
        [(url, record)] = sent
        self.assertTrue(url.endswith("t-RepairQueue"))
        info = record["DDBStreamBatchInfo"]
        self.assertEqual((info["shardId"], info["startSequenceNumber"], info["endSequenceNumber"]), ("s", "3", "3"))
        self.assertEqual((info["batchSize"], info["streamArn"]), (1, "arn:stream"))
        self.assertEqual(record["requestContext"]["condition"], "RetryAttemptsExhausted")

    def test_without_bisect_a_failing_batch_is_discarded_whole_after_the_retry_limit(self):
        host = FakeProjector(poison={"3"})
        sent = Sent()
        p = poller(host, sent)
        p._deliver("arn", "s", records(6))
        self.assertEqual(len(host.calls), 2)
        self.assertEqual(p.stats["discarded"], 6)
        self.assertEqual([(r["DDBStreamBatchInfo"]["startSequenceNumber"], r["DDBStreamBatchInfo"]["endSequenceNumber"])
                          for _, r in sent], [("0", "5")])


class FakeQueue:
    """moto's SQS as far as the queue poller uses it."""

    def __init__(self):
        self.deleted = []

    def delete_message_batch(self, QueueUrl, Entries):  # noqa: N803 - boto3's names
        self.deleted.extend(e["ReceiptHandle"] for e in Entries)


class FakeRepair:
    name, workers = "Repair", 1

    def __init__(self, keep):
        self.keep, self.events = keep, []

    def invoke(self, payload):
        self.events.append(payload)
        failed = [{"itemIdentifier": r["messageId"]} for r in payload["Records"] if r["body"] in self.keep]
        return json.dumps({"batchItemFailures": failed}).encode(), None


class QueueMappingTest(unittest.TestCase):
    def test_reported_failures_stay_in_the_queue_and_the_rest_are_deleted(self):
        host, sqs = FakeRepair(keep={"b"}), FakeQueue()
        p = queue_mapping.QueuePoller(host, {"BatchSize": 10, "FunctionResponseTypes": ["ReportBatchItemFailures"]},
                              sqs, ("http://q/0/t-RepairQueue", "arn:aws:sqs:us-east-1:0:t-RepairQueue"), 0.01)
        p.slots.acquire()
        p._deliver([{"MessageId": m, "ReceiptHandle": f"rh-{m}", "Body": m} for m in "abc"])
        record = host.events[0]["Records"][0]
        self.assertEqual((record["eventSource"], record["eventSourceARN"]),
                         ("aws:sqs", "arn:aws:sqs:us-east-1:0:t-RepairQueue"))
        self.assertEqual(sqs.deleted, ["rh-a", "rh-c"])


class FakeKafkaRecord:
    def __init__(self, topic, partition, offset):
        self.topic, self.partition, self.offset = topic, partition, offset
        self.timestamp, self.key, self.value, self.headers = 1, b"k", b"{}", []


class FakeConsumer:
    """kafka-python's consumer as far as the Kafka poller commits."""

    def __init__(self):
        self.commits = []

    def commit(self, offsets):
        self.commits.append({(tp.topic, tp.partition): o.offset for tp, o in offsets.items()})


class FakeStreamIngest:
    name = "StreamIngest"

    def __init__(self, answers):
        self.answers, self.events = list(answers), []

    def invoke(self, payload):
        self.events.append({k: [r["offset"] for r in v] for k, v in payload["records"].items()})
        answer = self.answers.pop(0) if self.answers else []
        if answer is None:
            return None, "boom"
        return json.dumps({"batchItemFailures": [{"itemIdentifier": f} for f in answer]}).encode(), None


class KafkaMappingTest(unittest.TestCase):
    def poller(self, host, sent=None):
        mapping = {"Topics": ["t"], "BatchSize": 10, "FunctionResponseTypes": ["ReportBatchItemFailures"],
                   "MaximumRetryAttempts": 2}
        destination = (sent, "http://q/0/t-StreamDeadLetterQueue") if sent is not None else None
        return kafka_mapping.KafkaPoller(host, mapping, "b:9092", "g", 0.001, destination)

    def batch(self):
        from kafka import TopicPartition

        return {TopicPartition("t", 0): [FakeKafkaRecord("t", 0, o) for o in range(4)],
                TopicPartition("t", 1): [FakeKafkaRecord("t", 1, o) for o in range(2)]}

    def test_a_reported_failure_commits_what_is_before_it_and_delivers_the_rest_of_its_partition(self):
        host, consumer = FakeStreamIngest([[{"partition": "t-0", "offset": 2}], []]), FakeConsumer()
        self.poller(host)._deliver(consumer, self.batch())
        self.assertEqual(host.events, [{"t-0": [0, 1, 2, 3], "t-1": [0, 1]}, {"t-0": [2, 3]}])
        self.assertEqual(consumer.commits, [{("t", 0): 2, ("t", 1): 2}, {("t", 0): 4}])

    def test_a_failing_batch_is_delivered_whole_again_then_given_up_to_the_destination(self):
        host, consumer, sent = FakeStreamIngest([None, None, None]), FakeConsumer(), Sent()
        p = self.poller(host, sent)
        p._deliver(consumer, self.batch())
        self.assertEqual(len(host.events), 3)  # the first try and two retries
        self.assertEqual(consumer.commits, [{("t", 0): 4, ("t", 1): 2}])
        [(_, record)] = sent
        info = record["KafkaBatchInfo"]
        self.assertEqual(info["batchSize"], 6)
        self.assertEqual(info["recordsInfo"]["t-0"], {"firstRecordOffset": "0", "lastRecordOffset": "3"})


class Process:
    """A function process's side of the Runtime API, spoken over HTTP to the host."""

    def __init__(self, host):
        self.conn = http.client.HTTPConnection("127.0.0.1", host.port, timeout=5)

    def next(self):
        self.conn.request("GET", f"{lambda_host.RUNTIME_PREFIX}/invocation/next")
        r = self.conn.getresponse()
        return r.getheader("Lambda-Runtime-Aws-Request-Id"), json.loads(r.read())

    def respond(self, request_id, result):
        self.conn.request("POST", f"{lambda_host.RUNTIME_PREFIX}/invocation/{request_id}/response",
                          body=json.dumps(result).encode())
        self.conn.getresponse().read()


class FunctionQueueTest(unittest.TestCase):
    def setUp(self):
        run_dir = tempfile.mkdtemp()
        spec = {"binary": "none", "timeout": 3, "memory": 128}
        # No processes are started: the test plays the one process.
        self.host = lambda_host.FunctionHost("fn", spec, run_dir, {}, 1, run_dir)
        self.addCleanup(self.host.server.shutdown)
        self.callers = concurrent.futures.ThreadPoolExecutor(2)
        self.addCleanup(self.callers.shutdown, wait=False)

    def test_a_request_no_process_takes_in_time_is_throttled_and_never_run(self):
        with self.assertRaises(lambda_host.Throttled):
            self.host.invoke({"n": 1}, queue_wait=0.05)
        # The throttled request is still in the queue, withdrawn: the process is handed
        # the one after it.
        later = self.callers.submit(self.host.invoke, {"n": 2}, queue_wait=5)
        process = Process(self.host)
        request_id, payload = process.next()
        self.assertEqual(payload, {"n": 2})
        process.respond(request_id, "ok")
        self.assertEqual(later.result(5), (b'"ok"', None))

    def test_a_request_taken_in_time_waits_for_its_answer_however_long_it_runs(self):
        process = Process(self.host)
        waiting = self.callers.submit(self.host.invoke, {"n": 1}, queue_wait=0.05)
        request_id, payload = process.next()
        # Longer than the queue bound: it is running, not queued.
        self.assertRaises(concurrent.futures.TimeoutError, waiting.result, 0.3)
        process.respond(request_id, payload)
        self.assertEqual(waiting.result(5), (b'{"n": 1}', None))


class AdmissionTest(unittest.TestCase):
    def test_a_connection_past_the_bound_is_refused_at_once_and_the_admitted_one_is_served(self):
        class Hello(httpd.Handler):
            def do_GET(self):
                self.reply(200, {"Content-Type": "text/plain"}, b"hello")

        server = httpd.Admitting(("127.0.0.1", 0), Hello, max_connections=1)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.shutdown)
        port = server.server_address[1]
        held = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        held.request("GET", "/")
        self.assertEqual(held.getresponse().read(), b"hello")
        # The first connection is still open (keep-alive): a second is over the bound.
        extra = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        extra.request("GET", "/")
        refused = extra.getresponse()
        self.assertEqual((refused.status, refused.getheader("Retry-After")), (503, "1"))
        self.assertEqual(json.loads(refused.read())["error"]["code"], "throttled")
        held.request("GET", "/")
        self.assertEqual(held.getresponse().read(), b"hello")
        held.close()
        # Once the held connection ends, a new one is admitted.
        for _ in range(50):
            again = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            again.request("GET", "/")
            answer = again.getresponse()
            again.close()
            if answer.status == 200:
                break
            time.sleep(0.05)
        self.assertEqual(answer.status, 200)


class TemplateTest(unittest.TestCase):
    def test_routes_functions_and_mappings_come_from_the_template(self):
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        t = template.read_template(os.path.join(root, "template.yaml"))
        functions, routes, streams, schedules = t.functions, t.routes, t.streams, t.schedules
        keys = {r.key: (r.function, r.iam) for r in routes}
        self.assertEqual(keys["POST /scores"], ("IngestFunction", True))
        self.assertEqual(keys["GET /leaderboards/{lb}/top"], ("TopFunction", False))
        self.assertEqual(streams[0]["function"], "ProjectorFunction")
        self.assertTrue(streams[0]["BisectBatchOnFunctionError"])
        # Parameters resolve to their defaults; Globals' variables merge with each function's.
        self.assertEqual(streams[0]["BatchSize"], 1000)
        self.assertEqual(streams[0]["MaximumRetryAttempts"], 10)
        self.assertIn("REDIS_URL", functions["ProjectorFunction"]["env"])
        self.assertIn("TABLE_NAME", functions["RankFunction"]["env"])
        self.assertIn("REDIS_URL", functions["RankFunction"]["env"])
        self.assertEqual(schedules[0]["function"], "RebuildFunction")
        self.assertEqual(functions["IngestFunction"]["binary"], "ingest")
        matching = [r.key for r in routes if r.regex.match("/leaderboards/g1:ranked:NA:ALL_TIME/top")]
        self.assertEqual(matching, ["GET /leaderboards/{lb}/top"])
        # The stream's exhausted batches and the repair function meet in the repair queue.
        on_failure = streams[0]["DestinationConfig"]["OnFailure"]["Destination"]
        self.assertEqual(template.logical_id(on_failure), "RepairQueue")
        self.assertEqual([(m["function"], template.logical_id(m["Queue"])) for m in t.queue_mappings],
                         [("SealFunction", "ExportQueue"), ("RepairFunction", "RepairQueue")])
        self.assertEqual(template.logical_id(t.queues["RepairQueue"]["RedrivePolicy"]["deadLetterTargetArn"]),
                         "RepairFailures")
        self.assertIn("REPAIR_QUEUE_URL", functions["RankFunction"]["env"])


def role(*statements):
    """An expanded template with one table and one function whose role has `statements`."""
    return iam.Roles({"Resources": {
        "T": {"Type": "AWS::DynamoDB::Table",
              "Properties": {"KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                           {"AttributeName": "sk", "KeyType": "RANGE"}]}},
        "F": {"Type": "AWS::Lambda::Function", "Properties": {"Role": {"Fn::GetAtt": ["FRole", "Arn"]}}},
        "FRole": {"Type": "AWS::IAM::Role", "Properties": {"Policies": [
            {"PolicyName": "p", "PolicyDocument": {"Statement": list(statements)}}]}},
    }})


def allow(actions, resource=None, keys=None):
    s = {"Effect": "Allow", "Action": actions, "Resource": resource or {"Fn::GetAtt": ["T", "Arn"]}}
    if keys is not None:
        s["Condition"] = {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": keys}}
    return s


def request(op, **body):
    return iam.accesses(f"DynamoDB_20120810.{op}", body, "pk")


class IamTest(unittest.TestCase):
    def test_each_request_names_its_actions_resources_and_partition_keys(self):
        get = request("GetItem", TableName="t", Key={"pk": {"S": "B#x"}, "sk": {"S": "BOARD"}})
        self.assertEqual([(a.action, a.resource, a.leading_keys) for a in get],
                         [("GetItem", iam.table_arn("t"), ["B#x"])])
        query = request("Query", TableName="t", IndexName="by_rank", KeyConditionExpression="#k = :p AND rk > :b",
                        ExpressionAttributeNames={"#k": "pk"},
                        ExpressionAttributeValues={":p": {"S": "S#x#01"}, ":b": {"S": "a"}})
        self.assertEqual((query[0].resource, query[0].leading_keys),
                         (iam.table_arn("t") + "/index/by_rank", ["S#x#01"]))
        # An index keyed on a partition key of its own leads with that key's value.
        names = iam.accesses("DynamoDB_20120810.Query", {
            "TableName": "t", "IndexName": "by_name", "KeyConditionExpression": "nk = :k AND begins_with(nf, :p)",
            "ExpressionAttributeValues": {":k": {"S": "N#z"}, ":p": {"S": "zo"}}}, "pk", {"by_name": "nk"})
        self.assertEqual(names[0].leading_keys, ["N#z"])
        tx = request("TransactWriteItems", TransactItems=[
            {"Put": {"TableName": "t", "Item": {"pk": {"S": "R#x#p"}, "sk": {"S": "M#1"}}}},
            {"ConditionCheck": {"TableName": "t", "Key": {"pk": {"S": "S#x#03"}, "sk": {"S": "p"}}}}])
        self.assertEqual([(a.action, a.leading_keys) for a in tx],
                         [("PutItem", ["R#x#p"]), ("ConditionCheckItem", ["S#x#03"])])
        batch = request("BatchGetItem", RequestItems={"t": {"Keys": [{"pk": {"S": "S#x#01"}}, {"pk": {"S": "R#y"}}]}})
        self.assertEqual([(a.action, a.leading_keys) for a in batch], [("BatchGetItem", ["S#x#01", "R#y"])])
        self.assertEqual(request("Scan", TableName="t")[0].leading_keys, [])

    def test_leading_keys_actions_and_resources_all_have_to_match(self):
        roles = role(allow(["dynamodb:GetItem", "dynamodb:Query"], keys=["B#*", "BL"]),
                     allow("dynamodb:Query", {"Fn::Sub": "${T.Arn}/index/by_rank"}, keys=["S#*"]))
        get = lambda pk: request("GetItem", TableName="t1", Key={"pk": {"S": pk}})  # noqa: E731
        self.assertIsNone(roles.denied("F", get("B#x")))
        self.assertIsNone(roles.denied("F", get("BL")))
        self.assertIsNotNone(roles.denied("F", get("BLX")))
        self.assertIsNotNone(roles.denied("F", get("RB#x")))
        self.assertIsNotNone(roles.denied("F", request("PutItem", TableName="t1", Item={"pk": {"S": "B#x"}})))
        on_index = request("Query", TableName="t1", IndexName="by_rank", KeyConditionExpression="pk = :p",
                           ExpressionAttributeValues={":p": {"S": "S#x#00"}})
        on_table = request("Query", TableName="t1", KeyConditionExpression="pk = :p",
                           ExpressionAttributeValues={":p": {"S": "S#x#00"}})
        self.assertIsNone(roles.denied("F", on_index))
        self.assertIsNotNone(roles.denied("F", on_table), "the table's ARN is not its index's")
        # A key condition without the partition key cannot satisfy LeadingKeys...
        self.assertIsNotNone(roles.denied("F", request("Query", TableName="t1", KeyConditionExpression="sk = :s",
                                                       ExpressionAttributeValues={":s": {"S": "B#x"}})))
        # ...while, as in AWS, a request with no key at all satisfies any ForAllValues.
        self.assertIsNone(role(allow("dynamodb:Scan", keys=["B#*"])).denied("F", request("Scan", TableName="t")))
        self.assertIsNotNone(roles.denied("Other", get("B#x")), "a function without a role gets nothing")

    def test_what_the_check_cannot_evaluate_fails_loudly(self):
        with self.assertRaises(ValueError):
            role({**allow("dynamodb:GetItem"), "Effect": "Deny"})
        with self.assertRaises(ValueError):
            role({**allow("dynamodb:GetItem"), "Condition": {"StringEquals": {"dynamodb:Select": "COUNT"}}})
        with self.assertRaises(ValueError):
            role(allow("dynamodb:GetItem", {"Ref": "SomethingElse"}))
        # Statements on other services are not its business.
        self.assertEqual(role({"Effect": "Deny", "Action": "kms:Decrypt", "Resource": "*"}).functions["F"], [])

    def test_queue_sends_and_stream_reads_are_checked_against_their_resources(self):
        send_policy = {"Effect": "Allow", "Action": ["sqs:SendMessage*"], "Resource": {"Fn::Sub": [
            "arn:${AWS::Partition}:sqs:${AWS::Region}:${AWS::AccountId}:${queueName}",
            {"queueName": {"Fn::GetAtt": ["RepairQueue", "QueueName"]}}]}}
        roles = role(send_policy, allow(["dynamodb:GetRecords", "dynamodb:GetShardIterator"],
                                        {"Fn::GetAtt": ["T", "StreamArn"]}))
        send = lambda url: iam.accesses("AmazonSQS.SendMessage", {"QueueUrl": url}, "pk")  # noqa: E731
        self.assertIsNone(roles.denied("F", send("http://127.0.0.1:8000/123456789012/t1-RepairQueue")))
        self.assertIsNotNone(roles.denied("F", send("http://127.0.0.1:8000/123456789012/t1-Other")))
        stream = iam.table_arn("t1") + "/stream/2026-11-23T00:00:00.000"
        it = iam.accesses("DynamoDBStreams_20120810.GetShardIterator", {"StreamArn": stream}, "pk")
        records = iam.accesses("DynamoDBStreams_20120810.GetRecords", {"ShardIterator": f"{stream}|1|abc"}, "pk")
        self.assertIsNone(roles.denied("F", it))
        self.assertIsNone(roles.denied("F", records))
        self.assertIsNotNone(role(send_policy).denied("F", records), "no stream statement, no stream reads")

    def test_s3_calls_signed_or_presigned_are_checked_against_the_objects_arn(self):
        put = {"Effect": "Allow", "Action": ["s3:PutObject", "s3:GetObject"],
               "Resource": {"Fn::Sub": "${ExportBucket.Arn}/exports/*"}}
        roles = iam.Roles({"Resources": {**{"ExportBucket": {"Type": "AWS::S3::Bucket"}}, **{
            "T": {"Type": "AWS::DynamoDB::Table",
                  "Properties": {"KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}]}},
            "F": {"Type": "AWS::Lambda::Function", "Properties": {"Role": {"Fn::GetAtt": ["FRole", "Arn"]}}},
            "FRole": {"Type": "AWS::IAM::Role", "Properties": {"Policies": [
                {"PolicyName": "p", "PolicyDocument": {"Statement": [put]}}]}}}}})
        bucket = "/t1-exportbucket"
        begin = iam.s3_accesses("POST", f"{bucket}/exports/b/1.csv", "uploads")
        part = iam.s3_accesses("PUT", f"{bucket}/exports/b/1.csv", "partNumber=2&uploadId=u")
        read = iam.s3_accesses("GET", f"{bucket}/exports/b/1.csv", "X-Amz-Credential=fn-F%2F2026")
        self.assertEqual([a.action for a in begin + part + read], ["PutObject", "PutObject", "GetObject"])
        for a in begin + part + read:
            self.assertIsNone(roles.denied("F", [a]), a)
        self.assertIsNotNone(roles.denied("F", iam.s3_accesses("GET", f"{bucket}/other/x.csv", "")))
        self.assertIsNotNone(roles.denied("F", iam.s3_accesses("GET", "/t1-otherbucket/exports/x", "")))
        abort = iam.s3_accesses("DELETE", f"{bucket}/exports/b/1.csv", "uploadId=u")
        self.assertEqual(abort[0].action, "AbortMultipartUpload")
        self.assertIsNotNone(roles.denied("F", abort), "not granted")
        # A presigned link names its signer in the query.
        self.assertEqual(iam.function_of(None, "X-Amz-Credential=fn-SealFunction%2F20261202%2Fus-east-1%2Fs3"),
                         "SealFunction")
        self.assertTrue(iam.is_s3({"QUERY_STRING": "X-Amz-Credential=fn-F%2F20261202%2Fus-east-1%2Fs3%2Faws4_request"}))

    def test_the_access_key_names_the_function(self):
        header = "AWS4-HMAC-SHA256 Credential=fn-RankFunction/20261122/us-east-1/dynamodb/aws4_request, X=y"
        self.assertEqual(iam.function_of(header), "RankFunction")
        self.assertIsNone(iam.function_of(header.replace("fn-RankFunction", "local")))
        self.assertIsNone(iam.function_of(None))

    def test_the_template_gives_every_function_a_role_and_the_stream_consumers_no_score_access(self):
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        roles = iam.load(os.path.join(root, "template.yaml"))
        self.assertEqual(set(roles.functions), {"IngestFunction", "RankFunction", "TopFunction", "FriendsFunction",
                                                "BoardsFunction", "AdminFunction", "RebuildFunction",
                                                "ProjectorFunction",
                                                "RepairFunction", "ModerationFunction", "SealFunction",
                                                "StreamIngestFunction", "LiveFunction", "ProfilesFunction",
                                                "TournamentsFunction"})
        table_statements = lambda f: [  # noqa: E731
            s for s in roles.functions[f]
            if any(a.startswith("dynamodb:") for a in s.actions) and not s.resources[0].endswith("/stream/*")]
        self.assertEqual(table_statements("ProjectorFunction"), [])
        # The live pushes read players' cards (their names) and the boards' definitions
        # (how they write scores), nothing else of the table.
        self.assertEqual([(s.actions, s.leading_keys) for s in table_statements("LiveFunction")],
                         [(["dynamodb:BatchGetItem"], ("ForAllValues:StringLike", ["P#*"])),
                          (["dynamodb:GetItem"], ("ForAllValues:StringLike", ["B#*"]))])
        self.assertTrue(all(s.leading_keys for f in roles.functions for s in table_statements(f)),
                        "every statement on the table names the keys it covers")


    def test_only_the_seal_function_may_publish_and_only_on_its_bus(self):
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        roles = iam.load(os.path.join(root, "template.yaml"))
        body = {"Entries": [{"EventBusName": "t-42-LeaderboardEventBus", "Source": "leaderboard"}]}
        wanted = iam.accesses("AWSEvents.PutEvents", body, roles.hash_key)
        self.assertEqual([(a.service, a.action) for a in wanted], [("events", "PutEvents")])
        self.assertIsNone(roles.denied("SealFunction", wanted))
        self.assertIsNotNone(roles.denied("ModerationFunction", wanted))
        other_bus = iam.accesses("AWSEvents.PutEvents", {"Entries": [{"EventBusName": "default"}]}, roles.hash_key)
        self.assertIsNotNone(roles.denied("SealFunction", other_bus))

    def test_only_the_console_and_the_repair_read_the_cache_control_plane(self):
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        roles = iam.load(os.path.join(root, "template.yaml"))
        group = iam.query_accesses({"Action": ["DescribeReplicationGroups"], "ReplicationGroupId": ["rank-1"]})
        events = iam.query_accesses({"Action": ["DescribeEvents"], "Duration": ["60"]})
        self.assertEqual([(a.service, a.action, a.resource) for a in group],
                         [("elasticache", "DescribeReplicationGroups",
                           "arn:aws:elasticache:us-east-1:123456789012:replicationgroup:rank-1")])
        self.assertIsNone(roles.denied("AdminFunction", group + events))
        self.assertIsNotNone(roles.denied("BoardsFunction", group))
        self.assertIsNone(roles.denied("RepairFunction", group))
        self.assertIsNotNone(roles.denied("RepairFunction", events))
        self.assertIsNotNone(roles.denied("IngestFunction", group))
        every_group = iam.query_accesses({"Action": ["DescribeReplicationGroups"]})
        self.assertIsNotNone(roles.denied("AdminFunction", every_group), "any group but its own")


class ConsoleRolesTest(unittest.TestCase):
    """The console's two roles as the local gateway holds them, read from the template's
    OperatorRole and SupportRole: support calls every operator read and nothing else."""

    @classmethod
    def setUpClass(cls):
        cls.template = template.read_template(os.path.join(base.ROOT, "template.yaml"))
        cls.roles = gateway.console_roles(cls.template.raw)

    def test_support_may_call_exactly_the_operators_get_routes(self):
        iam_routes = [r for r in self.template.routes if r.iam]
        support = {r.key for r in iam_routes
                   if gateway.role_allows(self.roles["support"], r.method, r.path.replace("{", "x").replace("}", ""))}
        reads = {r.key for r in iam_routes if r.method == "GET" and r.path.startswith("/admin/")}
        self.assertEqual(support, reads)
        self.assertIn("GET /admin/players", support)
        self.assertIn("GET /admin/held", support)

    def test_the_operator_may_call_every_operator_route_and_support_none_that_writes(self):
        for method, path in [("PUT", "/games/g/bans/p"), ("POST", "/admin/held/x~1"), ("PATCH", "/players/p/profile"),
                             ("POST", "/tournaments"), ("DELETE", "/players/p"), ("POST", "/admin/rebuild"),
                             ("PUT", "/admin/mappings/s"), ("GET", "/admin/players")]:
            self.assertTrue(gateway.role_allows(self.roles["operator"], method, path), (method, path))
            self.assertEqual(gateway.role_allows(self.roles["support"], method, path), method == "GET", (method, path))

    def test_the_operator_may_call_every_server_only_route_but_the_game_servers(self):
        game_servers = {"POST /scores", "POST /matches", "POST /tournaments/{t}/players/{p}/join", "POST /tournaments/{t}/players/{p}/score",
                        "GET /players/{p}/rewards", "POST /players/{p}/rewards/{id}/claim"}
        refused = {r.key for r in self.template.routes if r.iam
                   and not gateway.role_allows(self.roles["operator"], r.method, r.path.replace("{", "x").replace("}", ""))}
        self.assertEqual(refused, game_servers)
        # docs/console.md's roles table names exactly the routes the role is refused.
        with open(os.path.join(base.ROOT, "docs", "console.md"), encoding="utf-8") as f:
            row = next(line for line in f if line.startswith("| operator |"))
        named = set(re.findall(r"`((?:GET|POST|PUT|PATCH|DELETE) /[^`]*)`", row))
        self.assertEqual(named, refused)

    def test_a_statement_the_gateway_cannot_check_fails_loading(self):
        raw = {"Resources": {"OperatorRole": {"Properties": {"Policies": []}},
                             "SupportRole": {"Properties": {"Policies": [{"PolicyDocument": {"Statement": [
                                 {"Effect": "Allow", "Action": "execute-api:Invoke", "Resource": ["*"]}]}}]}}}}
        with self.assertRaises(ValueError):
            gateway.console_roles(raw)


class MonitoringTest(unittest.TestCase):
    """monitoring.py: CloudWatch's GetMetricData over the functions' EMF lines, as
    CloudWatch answers it (exact dimension sets, period buckets, the statistics)."""

    T0 = (int(time.time()) // 60 - 60) * 60_000  # the start of the minute an hour ago

    def emf(self, at, dims, values):
        names = [{"Name": n} for n in values]
        return json.dumps({"_aws": {"Timestamp": at, "CloudWatchMetrics": [
            {"Namespace": "Leaderboard", "Dimensions": [list(dims)], "Metrics": names}]}, **dims, **values})

    def setUp(self):
        import monitoring
        self.monitoring = monitoring
        self.dir = tempfile.mkdtemp()
        self.metrics = monitoring.Metrics(self.dir)
        lines = [
            self.emf(self.T0 + 1_000, {}, {"ResultsAccepted": 3}),
            self.emf(self.T0 + 2_000, {"Game": "g1"}, {"ResultsAccepted": 2}),
            self.emf(self.T0 + 61_000, {"Game": "g1"}, {"ResultsAccepted": 5}),
            self.emf(self.T0 + 62_000, {"Game": "g2"}, {"ResultsAccepted": 7}),
            self.emf(self.T0 + 63_000, {}, {"StreamLagSeconds": 0.5}),
            self.emf(self.T0 + 64_000, {}, {"StreamLagSeconds": 2.0}),
            "not a metric line", '{"level":"INFO","message":"{\\"_aws\\"}"}',
        ]
        with open(os.path.join(self.dir, "IngestFunction.log"), "w") as f:
            f.write("\n".join(lines) + "\n")

    def ask(self, queries, start=None, end=None, allowed=True):
        import urllib.parse
        from xml.etree import ElementTree
        iso = self.monitoring.iso
        form = {"Action": "GetMetricData", "StartTime": iso(start or self.T0), "EndTime": iso(end or self.T0 + 180_000),
                "ScanBy": "TimestampAscending"}
        for i, (qid, name, stat, dims) in enumerate(queries, 1):
            at = f"MetricDataQueries.member.{i}"
            form |= {f"{at}.Id": qid, f"{at}.MetricStat.Metric.Namespace": "Leaderboard",
                     f"{at}.MetricStat.Metric.MetricName": name, f"{at}.MetricStat.Period": "60",
                     f"{at}.MetricStat.Stat": stat}
            for j, (k, v) in enumerate(dims.items(), 1):
                form |= {f"{at}.MetricStat.Metric.Dimensions.member.{j}.Name": k,
                         f"{at}.MetricStat.Metric.Dimensions.member.{j}.Value": v}
        status, text = self.monitoring.handle(self.metrics, urllib.parse.urlencode(form).encode(), allowed)
        ns = {"cw": self.monitoring.XMLNS}
        doc = ElementTree.fromstring(text)
        if status != 200:
            return status, doc.find("cw:Error/cw:Code", ns).text
        out = {}
        for m in doc.findall("cw:GetMetricDataResult/cw:MetricDataResults/cw:member", ns):
            stamps = [t.text for t in m.findall("cw:Timestamps/cw:member", ns)]
            values = [float(v.text) for v in m.findall("cw:Values/cw:member", ns)]
            out[m.find("cw:Id", ns).text] = list(zip(stamps, values))
        return status, out

    def test_each_dimension_set_is_a_metric_of_its_own_bucketed_by_period(self):
        iso = self.monitoring.iso
        status, out = self.ask([("all", "ResultsAccepted", "Sum", {}), ("g1", "ResultsAccepted", "Sum", {"Game": "g1"}),
                                ("g3", "ResultsAccepted", "Sum", {"Game": "g3"}),
                                ("lag", "StreamLagSeconds", "Maximum", {}), ("n", "StreamLagSeconds", "SampleCount", {})])
        self.assertEqual(status, 200)
        self.assertEqual(out["all"], [(iso(self.T0), 3.0)])
        self.assertEqual(out["g1"], [(iso(self.T0), 2.0), (iso(self.T0 + 60_000), 5.0)])
        self.assertEqual(out["g3"], [])
        self.assertEqual(out["lag"], [(iso(self.T0 + 60_000), 2.0)])
        self.assertEqual(out["n"], [(iso(self.T0 + 60_000), 2.0)])

    def test_lines_written_later_are_read_and_the_window_bounds_the_answer(self):
        with open(os.path.join(self.dir, "IngestFunction.log"), "a") as f:
            f.write(self.emf(self.T0 + 125_000, {"Game": "g1"}, {"ResultsAccepted": 4}) + "\n")
            f.write(self.emf(self.T0 + 126_000, {"Game": "g1"}, {"ResultsAccepted": 9}))  # no newline yet
        _, out = self.ask([("g1", "ResultsAccepted", "Sum", {"Game": "g1"})], start=self.T0 + 60_000)
        self.assertEqual([v for _, v in out["g1"]], [5.0, 4.0])

    def test_what_cloudwatch_refuses_is_refused(self):
        self.assertEqual(self.ask([("x", "ResultsAccepted", "p99", {})]), (400, "InvalidParameterValue"))
        self.assertEqual(self.ask([], start=self.T0 + 1_000, end=self.T0), (400, "InvalidParameterValue"))
        self.assertEqual(self.ask([("x", "ResultsAccepted", "Sum", {})], allowed=False), (403, "AccessDenied"))

    def test_both_console_roles_may_read_the_metrics(self):
        raw = template.read_template(os.path.join(base.ROOT, "template.yaml")).raw
        self.assertEqual(gateway.metric_roles(raw), {"operator", "support"})


class ConsolePublishTest(unittest.TestCase):
    """infra/console/publish.py: the stack's outputs make config.json, and the built files
    land in the bucket with their types (on moto's S3)."""

    def test_the_outputs_make_the_config_and_every_file_is_uploaded_with_its_type(self):
        import tempfile

        import boto3
        from moto import mock_aws

        sys.path.insert(0, os.path.join(base.ROOT, "infra", "console"))
        import publish

        outputs = {"ApiUrl": "https://abc.execute-api.eu-west-1.amazonaws.com", "ConsoleBucketName": "console-b",
                   "ConsoleUrl": "https://d1.cloudfront.net/",
                   "ConsoleSignIn": json.dumps({"region": "eu-west-1", "user_pool_id": "eu-west-1_x", "client_id": "c",
                                                "identity_pool_id": "eu-west-1:i", "sign_in": "https://s"})}
        config = publish.config_of(outputs)
        self.assertEqual((config["mode"], config["api"], config["client_id"]),
                         ("aws", "https://abc.execute-api.eu-west-1.amazonaws.com", "c"))
        with self.assertRaises(SystemExit):
            publish.config_of({"ApiUrl": "x"})
        with tempfile.TemporaryDirectory() as dist, mock_aws():
            for name, text in (("index.html", "<!doctype html>"), ("app.js", "1"), ("style.css", "a{}")):
                with open(os.path.join(dist, name), "w") as f:
                    f.write(text)
            s3 = boto3.client("s3", region_name="us-east-1")
            s3.create_bucket(Bucket="console-b")
            self.assertEqual(publish.upload(s3, "console-b", dist, config),
                             ["app.js", "index.html", "style.css", "config.json"])
            head = s3.head_object(Bucket="console-b", Key="app.js")
            self.assertIn(head["ContentType"], ("text/javascript", "application/javascript"))
            self.assertEqual(head["CacheControl"], "no-cache")
            stored = json.loads(s3.get_object(Bucket="console-b", Key="config.json")["Body"].read())
            self.assertEqual(stored, config)


class OpenApiTest(unittest.TestCase):
    """openapi.yaml is valid OpenAPI 3.0, names exactly the template's routes with the same
    auth, and the reply check the tests run behind catches a reply that breaks it."""

    METHODS = {"get", "put", "post", "delete", "patch", "head", "options"}

    @classmethod
    def setUpClass(cls):
        cls.doc = gateway.load_openapi()
        cls.template = template.read_template(os.path.join(base.ROOT, "template.yaml"))

    def test_the_document_is_valid_openapi_3_0(self):
        from openapi_spec_validator import validate
        from openapi_spec_validator.versions.shortcuts import get_spec_version

        validate(self.doc)
        # API Gateway HTTP APIs import OpenAPI 3.0 only.
        self.assertEqual(str(get_spec_version(self.doc)), "OpenAPIV3.0")

    def test_routes_and_their_auth_are_the_templates(self):
        default = self.doc.get("security", [])
        documented = {}
        for path, item in self.doc["paths"].items():
            for method, op in item.items():
                if method in self.METHODS:
                    schemes = {name for req in op.get("security", default) for name in req}
                    documented[(method.upper(), path)] = "sigv4" in schemes
        deployed = {(r.method, r.path): r.iam for r in self.template.routes}
        self.assertEqual(documented, deployed)

    def test_a_reply_that_breaks_the_document_is_caught(self):
        check = gateway.ReplyCheck(self.doc)
        json_type = {"Content-Type": "application/json"}
        row = {"rank": 1, "player_id": "a", "score": 5, "updated_at": "2026-11-23T10:00:00.123Z", "self": True,
               "display_name": "Ada", "avatar": None, "country": "SE", "metadata": {"car": "gt3"}}
        rank = {"leaderboard_id": "g:x", "player_id": "a", "score": 5, "global_rank": 1, "rank_mode": "dense",
                "total": 1, "percentile": 100.0, "points_to_next": None, "updated_at": "2026-11-23T10:00:00.123Z",
                "neighbors": [row], "as_of": "2026-11-23T10:00:00.456Z", "source": "redis"}
        path = "/leaderboards/g:x/players/a/rank"

        def verdict(reply, status=200):
            return check.violation("GET", path, {}, status, json_type, json.dumps(reply).encode())

        self.assertIsNone(verdict(rank))
        self.assertIsNone(verdict({**rank, "degraded": True, "source": "dynamodb"}))
        renamed = {**{k: v for k, v in rank.items() if k != "neighbors"}, "neighbours": [row]}
        self.assertIn("neighbours", verdict(renamed))
        self.assertIn("points_to_next", verdict({**rank, "points_to_next": 0}))
        # A decimal board's scores: numbers with places, or decimal strings; nothing else.
        self.assertIsNone(verdict({**rank, "score": 83.417, "points_to_next": 0.008}))
        self.assertIsNone(verdict({**rank, "score": "-83.410", "points_to_next": "0.008"}))
        self.assertIn("score", verdict({**rank, "score": "83,41"}))
        self.assertIn("points_to_next", verdict({**rank, "points_to_next": "-0.008"}))
        self.assertIn("rank_mode", verdict({**rank, "rank_mode": "olympic"}))
        error = {"code": "not_ranked", "message": "x", "request_id": "r-1"}
        self.assertIsNotNone(verdict({"error": {**error, "code": "no_such_code"}}, 404))
        self.assertIn("418", verdict({"error": error}, 418))
        self.assertIsNone(verdict({"error": error}, 404))
        # Every error carries its request id; every 400 and 422 names its field.
        self.assertIn("request_id", verdict({"error": {"code": "not_ranked", "message": "x"}}, 404))
        bad = {"code": "invalid_request", "message": "k: x", "request_id": "r-1"}
        self.assertIn("field", verdict({"error": bad}, 400))
        self.assertIsNone(verdict({"error": {**bad, "field": "k"}}, 400))


if __name__ == "__main__":
    unittest.main()


class IdpTest(unittest.TestCase):
    """The local JWT checks: the verifier finds the issuer's keys from its discovery
    document, over HTTP, as API Gateway's JWT authorizer does, and refuses what it
    refuses, with its reason."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)
        self.issuer = idp.Issuer(os.path.join(self.dir.name, "key.pem"), "https://iss.test", "aud-1")
        self.server = httpd.Server(("127.0.0.1", 0), idp.serve_handler(self.issuer))
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.addCleanup(self.server.shutdown)
        url = f"http://127.0.0.1:{self.server.server_address[1]}{idp.DISCOVERY}"
        self.verifier = idp.Verifier(url, "https://iss.test", "aud-1")

    def reason(self, token):
        claims, why = self.verifier.verify(token)
        self.assertIsNone(claims)
        return why

    def test_a_token_it_minted_is_accepted_with_or_without_bearer(self):
        token = self.issuer.mint("alice")
        for auth in (token, f"Bearer {token}", f"bearer {token}"):
            claims, why = self.verifier.verify(auth)
            self.assertIsNone(why)
            self.assertEqual(claims["sub"], "alice")
        self.assertEqual(idp.as_event_claims({"aud": ["a", "b"], "exp": 5, "ok": True}),
                         {"aud": "[a b]", "exp": "5", "ok": "true"})
        # The key file is kept: a second issuer on it signs under the same key id.
        self.assertEqual(idp.Issuer(os.path.join(self.dir.name, "key.pem")).kid, self.issuer.kid)

    def test_refusals_name_their_reason(self):
        other = idp.Issuer(os.path.join(self.dir.name, "other.pem"), "https://iss.test", "aud-1")
        self.assertIsNone(self.reason(None))
        self.assertIn("not a valid JWT", self.reason("Bearer x.y"))
        # Another key under this key's id: the signature does not verify.
        other.kid = self.issuer.kid
        self.assertIn("signature", self.reason(other.mint("alice")))
        self.assertIn("expired", self.reason(self.issuer.mint("alice", exp=int(time.time()) - 1)))
        self.assertIn("expiration", self.reason(self.issuer.mint("alice", exp=None)))
        self.assertIn("not valid yet", self.reason(self.issuer.mint("alice", nbf=int(time.time()) + 60)))
        self.assertIn("issuer", self.reason(self.issuer.mint("alice", iss="https://other")))
        self.assertIn("audience", self.reason(self.issuer.mint("alice", aud="aud-2")))
        self.assertIn("subject", self.reason(self.issuer.mint("")))
        # client_id stands for aud only when there is no aud.
        self.assertIsNone(self.verifier.verify(self.issuer.mint("a", aud=None, client_id="aud-1"))[1])
        self.assertIn("audience", self.reason(self.issuer.mint("a", aud="x", client_id="aud-1")))

    def test_an_hmac_token_is_refused_whatever_its_key(self):
        import base64
        import hashlib
        import hmac

        def b64(data):
            return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

        claims = {"sub": "alice", "iss": "https://iss.test", "aud": "aud-1", "exp": int(time.time()) + 60}
        signing = f'{b64(json.dumps({"alg": "HS256", "kid": self.issuer.kid}).encode())}.{b64(json.dumps(claims).encode())}'
        # Any secret, and the public key itself (the "algorithm confusion" forgery).
        for secret in (b"local-jwt-secret-not-for-production", self.issuer.key.as_pem(private=False)):
            token = f"{signing}.{b64(hmac.new(secret, signing.encode(), hashlib.sha256).digest())}"
            self.assertIsNotNone(self.reason(token), secret[:20])

    def test_a_new_key_is_fetched_when_a_token_names_it(self):
        self.assertIsNone(self.verifier.verify(self.issuer.mint("alice"))[1])
        # The issuer rotates its key; a token under the new id makes the verifier read the
        # JWKS again.
        rotated = idp.Issuer(os.path.join(self.dir.name, "rotated.pem"), "https://iss.test", "aud-1")
        self.issuer.key, self.issuer.kid = rotated.key, rotated.kid
        self.verifier.fetched_at = 0
        self.assertIsNone(self.verifier.verify(rotated.mint("alice"))[1])


class Sigv4Test(unittest.TestCase):
    """The local IAM check against a signer it does not share code with (botocore's, as
    the AWS SDK for Python signs): what it signs passes, any change to what arrived is
    refused."""

    KEYS = {"AKIDGAME": ("game-secret", "game-server")}
    HOST = "127.0.0.1:4010"

    def signed(self, method, target, body=b"", key=("AKIDGAME", "game-secret"), at=None, region="us-east-1"):
        from unittest import mock

        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials
        req = AWSRequest(method=method, url=f"http://{self.HOST}{target}", data=body,
                         headers={"content-type": "application/json"})
        signer = SigV4Auth(Credentials(*key), "execute-api", region)
        if at is None:
            signer.add_auth(req)
        else:
            then = datetime.datetime.fromtimestamp(at, datetime.timezone.utc).replace(tzinfo=None)
            with mock.patch("botocore.auth.get_current_datetime", return_value=then):
                signer.add_auth(req)
        return {"host": self.HOST, **{k.lower(): v for k, v in req.headers.items()}}

    def verify(self, method, target, headers, body=b""):
        path, _, query = target.partition("?")
        return sigv4.verify(self.KEYS, "us-east-1", method, path, query, headers, body)

    def test_what_botocore_signs_passes_on_ids_with_colons_unicode_and_queries(self):
        body = b'{"new_score": 10, "match_id": "m1"}'
        for method, target, sent in [
            ("POST", "/leaderboards/arena%3Aranked/players/p%C3%A9-1/score", body),
            ("POST", "/leaderboards/arena:ranked/players/p1/score", body),
            ("GET", "/admin/players?name_prefix=%C3%89lo%C3%AFse%2C%20J&limit=5", b""),
            ("GET", "/admin/held?game=g1&board=a%3Ab&board=a%3Ac", b""),
            ("DELETE", "/games/g1/bans/p1", b""),
        ]:
            self.assertEqual(self.verify(method, target, self.signed(method, target, sent), sent), "game-server", target)

    def test_any_change_to_what_arrived_is_refused(self):
        body = b'{"new_score": 10, "match_id": "m1"}'
        target = "/leaderboards/arena%3Aranked/players/p1/score"
        good = self.signed("POST", target, body)
        cases = {
            "another body": ("POST", target, good, b'{"new_score": 99, "match_id": "m1"}'),
            "another path": ("POST", target.replace("p1", "p2"), good, body),
            "the colon unescaped": ("POST", target.replace("%3A", ":"), good, body),
            "another method": ("PUT", target, good, body),
            "a query added": ("POST", target + "?x=1", good, body),
            "a signed header changed": ("POST", target, {**good, "content-type": "text/plain"}, body),
            "a wrong secret": ("POST", target, self.signed("POST", target, body, key=("AKIDGAME", "guess")), body),
            "an unknown key": ("POST", target, self.signed("POST", target, body, key=("AKIDOTHER", "game-secret")), body),
            "another region": ("POST", target, self.signed("POST", target, body, region="eu-west-1"), body),
            "a stale date": ("POST", target, self.signed("POST", target, body, at=time.time() - 360), body),
            "a date ahead": ("POST", target, self.signed("POST", target, body, at=time.time() + 360), body),
            "no signature": ("POST", target, {"host": self.HOST}, body),
        }
        for what, (method, t, headers, sent) in cases.items():
            with self.assertRaises(sigv4.Refused, msg=what):
                self.verify(method, t, headers, sent)
        # Within the five minutes either way: accepted.
        self.assertEqual(self.verify("POST", target, self.signed("POST", target, body, at=time.time() - 240), body),
                         "game-server")


class PrincipalPoliciesTest(unittest.TestCase):
    """Each local key's principal is held to the template's policy of that name."""

    @classmethod
    def setUpClass(cls):
        cls.template = template.read_template(os.path.join(base.ROOT, "template.yaml"))
        cls.policies = gateway.principal_policies(cls.template.raw)

    def test_game_servers_may_call_exactly_the_game_server_policys_routes(self):
        allowed = {r.key for r in self.template.routes if r.iam and gateway.role_allows(
            self.policies["game-server"], r.method, r.path.replace("{", "x").replace("}", ""))}
        self.assertEqual(allowed, {"POST /leaderboards/{lb}/players/{p}/score", "POST /scores", "POST /matches",
                                   "POST /tournaments/{t}/players/{p}/score", "POST /tournaments/{t}/players/{p}/join",
                                   "PUT /players/{p}/profile", "PATCH /players/{p}/profile",
                                   "GET /players/{p}/rewards", "POST /players/{p}/rewards/{id}/claim"})
        self.assertIsNone(self.policies["admin"])
        self.assertEqual({p for _, p in sigv4.LOCAL_KEYS.values()}, set(self.policies))
