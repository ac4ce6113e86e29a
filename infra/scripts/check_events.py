"""Checks the events the functions published during a test run against their documented
schemas (docs/events/<detail-type>.schema.json, JSON Schema 2020-12, each of an event's
`detail`): every captured event has a schema and validates, and with `--every-type`
(a whole run) every schema was met at least once, so none documents an event nobody
emits.

The end-to-end tests capture what reaches the stack's bus (each event a rule's queue
drains is written to `$LB_TEST_EVENTS_DIR`, `tests/e2e/support/events.rs`).

Usage: check_events.py SCHEMA_DIR EVENTS_DIR [--every-type]
"""

import json
import pathlib
import sys

from jsonschema import Draft202012Validator


def problems(schema_dir, events_dir, every_type=False):
    """What is wrong, one line each (nothing: all well), and how many events were checked."""
    schemas = {p.name.removesuffix(".schema.json"): Draft202012Validator(json.loads(p.read_text()))
               for p in sorted(pathlib.Path(schema_dir).glob("*.schema.json"))}
    found, seen, checked = [], set(), 0
    for path in sorted(pathlib.Path(events_dir).glob("*.json")):
        event = json.loads(path.read_text())
        kind = event.get("detail-type")
        checked += 1
        if kind not in schemas:
            found.append(f"{path.name}: no schema for detail-type {kind!r}")
            continue
        seen.add(kind)
        if event.get("source") != "leaderboard":
            found.append(f"{path.name}: source is {event.get('source')!r}, not leaderboard")
        for error in schemas[kind].iter_errors(event.get("detail")):
            where = "/".join(str(p) for p in error.absolute_path) or "detail"
            found.append(f"{path.name} ({kind}): {where}: {error.message}")
    if every_type:
        found += [f"{kind}: documented, but no test met one" for kind in sorted(set(schemas) - seen)]
    return found, checked


def main(argv):
    every = "--every-type" in argv
    args = [a for a in argv if not a.startswith("--")]
    found, checked = problems(args[0], args[1], every)
    for line in found:
        print(line, file=sys.stderr)
    print(f"{checked} published events checked against docs/events; {len(found)} problems")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
