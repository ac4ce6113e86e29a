"""Where the repository is, and the local stack's log lines (one JSON object each, on stderr).
"""
import datetime
import json
import os
import sys


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def log(msg, **fields):
    line = {"ts": datetime.datetime.now(datetime.timezone.utc).isoformat(), "msg": msg, **fields}
    print(json.dumps(line), file=sys.stderr, flush=True)
