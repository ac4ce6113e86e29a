"""The project's own checks (infra/scripts), shown to fail on what they are for: run by
infra/test.sh with `python -m unittest` from this folder."""

import json
import pathlib
import tempfile
import unittest

import check_events
import check_prose
import check_unity_package


class UnityPackage(unittest.TestCase):
    def package(self):
        root = pathlib.Path(tempfile.mkdtemp())
        (root / "package.json").write_text(json.dumps({"name": "com.example.pkg"}))
        (root / "Runtime").mkdir()
        (root / "Runtime" / "A.cs").write_text("class A {}")
        (root / "Tests~").mkdir()
        (root / "Tests~" / "T.cs").write_text("class T {}")
        return root

    def test_a_file_or_folder_without_a_meta_fails_and_hidden_ones_need_none(self):
        root = self.package()
        found = check_unity_package.problems(root)
        self.assertEqual(sorted(p.split(":")[0] for p in found), ["Runtime", "Runtime/A.cs", "package.json"])
        self.assertEqual(check_unity_package.problems(root, write=True), [])
        self.assertEqual(check_unity_package.problems(root), [])
        self.assertIn("folderAsset: yes", (root / "Runtime.meta").read_text())

    def test_a_guid_used_twice_or_a_meta_naming_nothing_fails(self):
        root = self.package()
        check_unity_package.problems(root, write=True)
        (root / "Runtime" / "A.cs.meta").write_text((root / "package.json.meta").read_text())
        (root / "Gone.cs.meta").write_text((root / "Runtime.meta").read_text().replace("e", "f"))
        found = check_unity_package.problems(root)
        self.assertTrue(any("Gone.cs.meta: names no file" in p for p in found), found)
        self.assertTrue(any("is package.json.meta's too" in p or "is Runtime/A.cs.meta's too" in p for p in found), found)

    def test_the_same_asset_gets_the_same_guid_anywhere(self):
        a, b = self.package(), self.package()
        check_unity_package.problems(a, write=True)
        check_unity_package.problems(b, write=True)
        self.assertEqual((a / "Runtime/A.cs.meta").read_text(), (b / "Runtime/A.cs.meta").read_text())


class Prose(unittest.TestCase):
    def test_tracker_references_are_found_and_other_projects_trackers_are_not(self):
        for line in ["since issue 57", "(issue 38; docs)", "the issue's bound", "Issue 33's targets"]:
            self.assertTrue(check_prose.TRACKER.search(line), line)
        for line in ["heroiclabs/nakama issues 413 and 2547", "functions that issue cursors", "an issuer"]:
            self.assertTrue(not check_prose.TRACKER.search(line) or check_prose.EXTERNAL.search(line), line)


if __name__ == "__main__":
    unittest.main()


class Events(unittest.TestCase):
    def dirs(self):
        root = pathlib.Path(tempfile.mkdtemp())
        (root / "schemas").mkdir()
        (root / "events").mkdir()
        schema = {"type": "object", "additionalProperties": False, "required": ["a"],
                  "properties": {"a": {"type": "integer"}}}
        (root / "schemas" / "x.done.schema.json").write_text(json.dumps(schema))
        (root / "schemas" / "x.other.schema.json").write_text(json.dumps(schema))
        return root

    def event(self, root, name, kind, detail):
        body = {"source": "leaderboard", "detail-type": kind, "detail": detail}
        (root / "events" / name).write_text(json.dumps(body))

    def test_an_event_off_its_schema_or_without_one_fails_and_every_type_must_be_met(self):
        root = self.dirs()
        self.event(root, "1.json", "x.done", {"a": 1})
        self.assertEqual(check_events.problems(root / "schemas", root / "events"), ([], 1))
        found, _ = check_events.problems(root / "schemas", root / "events", every_type=True)
        self.assertEqual(found, ["x.other: documented, but no test met one"])
        self.event(root, "2.json", "x.done", {"a": "one", "b": 2})
        self.event(root, "3.json", "x.unknown", {})
        found, checked = check_events.problems(root / "schemas", root / "events")
        self.assertEqual(checked, 3)
        self.assertEqual(len(found), 3, found)
        self.assertTrue(any("3.json: no schema" in f for f in found), found)
