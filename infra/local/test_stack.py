"""Tests of the local stack's pure parts: the event source mapping's retry semantics,
the template reading and the IAM check's rules. Run by infra/test.sh (python -m unittest)."""

import json
import os
import tempfile
import unittest

import iam
import stack


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


def poller(host, **mapping):
    base = {"BatchSize": 10, "FunctionResponseTypes": ["ReportBatchItemFailures"], "MaximumRetryAttempts": 1}
    return stack.StreamPoller(host, {**base, **mapping}, "t", (None, None), 0.001, tempfile.mkdtemp())


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
        p = poller(host, BisectBatchOnFunctionError=True)
        p._deliver("arn", "s", records(6))
        self.assertIn(["4", "5"], host.calls)
        self.assertEqual(p.cursor["s"], "5")
        self.assertEqual((p.stats["records"], p.stats["discarded"]), (5, 1))
        with open(p.dlq_path, encoding="utf-8") as f:
            failed = [json.loads(line) for line in f]
        self.assertEqual([(d["first"], d["last"]) for d in failed], [("3", "3")])

    def test_without_bisect_a_failing_batch_is_discarded_whole_after_the_retry_limit(self):
        host = FakeProjector(poison={"3"})
        p = poller(host)
        p._deliver("arn", "s", records(6))
        self.assertEqual(len(host.calls), 2)
        self.assertEqual(p.stats["discarded"], 6)


class TemplateTest(unittest.TestCase):
    def test_routes_functions_and_mappings_come_from_the_template(self):
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        _, functions, routes, streams, schedules = stack.read_template(os.path.join(root, "template.yaml"))
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
        self.assertEqual(role({"Effect": "Deny", "Action": "sqs:SendMessage", "Resource": "*"}).functions["F"], [])

    def test_the_access_key_names_the_function(self):
        header = "AWS4-HMAC-SHA256 Credential=fn-RankFunction/20261122/us-east-1/dynamodb/aws4_request, X=y"
        self.assertEqual(iam.function_of(header), "RankFunction")
        self.assertIsNone(iam.function_of(header.replace("fn-RankFunction", "local")))
        self.assertIsNone(iam.function_of(None))

    def test_the_template_gives_every_function_a_role_and_the_projector_no_table_access(self):
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        roles = iam.load(os.path.join(root, "template.yaml"))
        self.assertEqual(set(roles.functions), {"IngestFunction", "RankFunction", "TopFunction", "FriendsFunction",
                                                "BoardsFunction", "RebuildFunction", "ProjectorFunction"})
        self.assertEqual(roles.functions["ProjectorFunction"], [])
        self.assertTrue(all(s.leading_keys for f, st in roles.functions.items() for s in st),
                        "every DynamoDB statement names the keys it covers")


if __name__ == "__main__":
    unittest.main()
