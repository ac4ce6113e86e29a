"""The template's schedules (EventBridge rules): each `rate()` run on a timer.
"""
import json
import re

from base import log


def rate_seconds(expression):
    """Seconds of a `rate(N unit)` expression (cron expressions are not played)."""
    m = re.match(r"^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$", expression.strip())
    if not m:
        return None
    unit = {"minute": 60, "hour": 3600, "day": 86400}[m.group(2).rstrip("s")]
    return int(m.group(1)) * unit


def run_schedule(host, mapping, every, stopped):
    payload = json.loads(mapping.get("Input") or "{}")
    while not stopped.wait(every):
        result, error = host.invoke(payload)
        if error is not None:
            log("scheduled invocation failed", function=host.name, error=error)
