"""The bill meter's pricing rules (meter.py), on items whose sizes the AWS guide spells out."""

import unittest

import meter


class ItemSize(unittest.TestCase):
    def test_each_type_counts_its_name_and_value(self):
        self.assertEqual(meter.item_size({"pk": {"S": "S#b1"}}), 2 + 4)
        self.assertEqual(meter.item_size({"n": {"N": "12345"}}), 1 + 3 + 1)
        self.assertEqual(meter.item_size({"n": {"N": "-0.00100"}}), 1 + 1 + 1)
        self.assertEqual(meter.item_size({"n": {"N": "1E+3"}}), 1 + 1 + 1)
        self.assertEqual(meter.item_size({"b": {"BOOL": True}, "z": {"NULL": True}}), 2 + 2)
        self.assertEqual(meter.item_size({"b": {"B": "AAEC"}}), 1 + 3)
        self.assertEqual(meter.item_size({"l": {"L": []}}), 1 + 3)
        self.assertEqual(meter.item_size({"m": {"M": {"ab": {"S": "x"}}}}), 1 + 3 + 1 + 2 + 1)
        self.assertEqual(meter.item_size({"é": {"S": "é"}}), 2 + 2)
        self.assertEqual(meter.item_size(None), 0)


class Units(unittest.TestCase):
    def test_writes_round_the_larger_image_up_to_a_kilobyte(self):
        small, big = {"a": {"S": "x"}}, {"a": {"S": "x" * 1500}}
        self.assertEqual(meter.write_units(None, small), 1)
        self.assertEqual(meter.write_units(big, small), 2)
        self.assertEqual(meter.write_units(small, None), 1)

    def test_reads_round_up_to_four_kilobytes_and_halve_when_eventual(self):
        self.assertEqual(meter.read_units(0, True), 1)
        self.assertEqual(meter.read_units(4096, True), 1)
        self.assertEqual(meter.read_units(4097, True), 2)
        self.assertEqual(meter.read_units(100, False), 0.5)

    def test_an_index_entry_costs_one_to_add_or_drop_and_two_to_move(self):
        index = {"keys": ["pk", "rk"], "table_keys": ["pk", "sk"], "projected": []}
        row = lambda rk, other="x": {"pk": {"S": "p"}, "sk": {"S": "s"}, "rk": {"S": rk}, "o": {"S": other}}
        unranked = {"pk": {"S": "p"}, "sk": {"S": "s"}}
        self.assertEqual(meter.index_units(index, None, row("1")), 1)
        self.assertEqual(meter.index_units(index, row("1"), None), 1)
        self.assertEqual(meter.index_units(index, row("1"), row("2")), 2)
        self.assertEqual(meter.index_units(index, row("1"), row("1", "y")), 0, "keys only: o is not in it")
        self.assertEqual(meter.index_units(index, unranked, unranked), 0)
        projected = {**index, "projected": ["o"]}
        self.assertEqual(meter.index_units(projected, row("1"), row("1", "y")), 1)


class Faults(unittest.TestCase):
    def put(self, pk):
        return {"TableName": "t", "Item": {"pk": {"S": pk}, "sk": {"S": "x"}}}

    def test_the_armed_call_breaks_once_and_others_pass(self):
        f = meter.Fault()
        f.arm({"op": "PutItem", "pk_prefix": "S#", "skip": 1, "mode": "after"})
        self.assertIsNone(f.match("GetItem", {"Key": {"pk": {"S": "S#b#01"}}}))
        self.assertIsNone(f.match("PutItem", self.put("R#b#p")))
        self.assertIsNone(f.match("PutItem", self.put("S#b#01")))
        self.assertEqual(f.match("PutItem", self.put("S#b#02")), "after")
        self.assertIsNone(f.match("PutItem", self.put("S#b#03")))
        self.assertEqual(f.state(), {"fired": 1, "held": False})

    def test_a_held_call_says_so_until_released(self):
        f = meter.Fault()
        f.arm({"op": "PutItem", "pk_prefix": "", "mode": "hold"})
        self.assertEqual(f.match("PutItem", self.put("S#b#01")), "hold")
        self.assertTrue(f.state()["held"])
        f.release.set()
        f.wait()
        self.assertFalse(f.state()["held"])


if __name__ == "__main__":
    unittest.main()
