"""floor.py's reading of the template: the conditions a profile turns on, what it prices,
and the check that holds docs/cost.md to its output."""
import os
import tempfile
import unittest

import floor


class FloorTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tpl = floor.load_template(os.path.join(floor.ROOT, "template.yaml"))
        with open(os.path.join(floor.HERE, "prices.json"), encoding="utf-8") as f:
            cls.prices = __import__("json").load(f)

    def lines(self, values):
        return floor.fixed_lines(floor.Stack(self.tpl, values), self.prices)

    def test_the_profiles_price_what_they_deploy(self):
        standard = " ".join(what for what, _, _ in self.lines({}))
        small = " ".join(what for what, _, _ in self.lines({"Profile": "small"}))
        self.assertEqual(standard.count("interface endpoint"), 4)
        self.assertIn("RankCache: 2 x cache.t4g.medium (valkey)", standard)
        self.assertNotIn("interface endpoint", small)
        self.assertNotIn("detailed metrics", small)
        self.assertIn("RankCacheServerless", small)

    def test_parameters_change_the_price(self):
        nat = sum(x for _, _, x in self.lines({"NatGateway": "true"}))
        three = " ".join(w for w, _, _ in self.lines({"CacheShards": "3", "CacheReplicasPerShard": "2"}))
        self.assertGreater(nat, sum(x for _, _, x in self.lines({})))
        self.assertIn("9 x cache.t4g.medium", three)

    def test_conditions_read_as_cloudformation_reads_them(self):
        stack = floor.Stack({"Parameters": {"A": {"Default": "x"}}, "Resources": {}, "Conditions": {
            "IsX": {"Equals": [{"Ref": "A"}, "x"]},
            "NotX": {"Fn::Not": [{"Condition": "IsX"}]},
            "Both": {"And": [{"Condition": "IsX"}, {"Condition": "NotX"}]},
            "Either": {"Or": [{"Condition": "IsX"}, {"Condition": "NotX"}]}}}, {})
        self.assertEqual([stack.holds(c) for c in ["IsX", "NotX", "Both", "Either"]], [True, False, False, True])
        self.assertEqual(stack.value({"If": ["IsX", [1, {"Ref": "AWS::NoValue"}], 2]}), [1])

    def test_a_doc_that_drifted_fails_the_check(self):
        with tempfile.NamedTemporaryFile("w", suffix=".md", delete=False) as f:
            f.write("<!-- floor.py -->\n| old | table |\n<!-- /floor.py -->\n")
        try:
            self.assertEqual(floor.main(["--check", f.name]), 1)
        finally:
            os.unlink(f.name)


if __name__ == "__main__":
    unittest.main()
