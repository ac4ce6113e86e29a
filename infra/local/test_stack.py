"""Tests of the local stack's pure parts: the event source mapping's retry semantics
and the template reading. Run by infra/test.sh (python -m unittest)."""

import json
import os
import tempfile
import unittest

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


if __name__ == "__main__":
    unittest.main()
