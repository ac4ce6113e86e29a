"""CloudWatch's `GetMetricData` on the local stack, over the metrics the functions print.

In AWS, Lambda's log pipeline turns each function's Embedded Metric Format lines into
CloudWatch metrics, and the console's overview reads them with `GetMetricData` (the Query
protocol, signed with the operator's credentials: docs/console.md). Locally the stack
keeps each function's stdout in `<Function>.log`; this reads the EMF lines there as
CloudWatch extracts them (each directive's namespace, each of its dimension sets, each
of its metrics) and answers the same request with the same XML, so the console's code is
the same on both.

What it answers as CloudWatch does: `MetricStat` queries (namespace, name, the exact
dimension set: a metric with other dimensions, or none, is another metric), `Period`
buckets aligned on `StartTime`, the statistics `Sum`, `Average`, `Minimum`, `Maximum`
and `SampleCount`, `ReturnData`, the newest bucket first (`ScanBy` as asked). What it
refuses with CloudWatch's error, rather than answer differently: metric math and
Metrics Insights (`Expression`), and paging (`NextToken`: every answer is whole here).
"""
import glob
import json
import os
import threading
import time
import urllib.parse
import uuid
from datetime import datetime, timezone
from xml.sax.saxutils import escape

STATS = {
    "Sum": sum,
    "Average": lambda v: sum(v) / len(v),
    "Minimum": min,
    "Maximum": max,
    "SampleCount": len,
}
XMLNS = "http://monitoring.amazonaws.com/doc/2010-08-01/"
# How long CloudWatch keeps minute datapoints; older ones are dropped here too, so a
# stack left running does not grow without bound.
KEPT_MS = 15 * 86_400_000


class Refused(Exception):
    """A request CloudWatch would refuse: its error code and message (HTTP 400)."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def datapoints(line):
    """The datapoints of one log line: (namespace, name, dimensions, value, epoch ms) for
    each metric of each directive under each of its dimension sets; none if the line is
    not EMF."""
    try:
        doc = json.loads(line)
        meta = doc["_aws"]
        at = int(meta["Timestamp"])
        directives = meta["CloudWatchMetrics"]
    except (ValueError, KeyError, TypeError):
        return
    for d in directives:
        for dims in d.get("Dimensions", [[]]):
            values = tuple(sorted((k, str(doc.get(k, ""))) for k in dims))
            for m in d.get("Metrics", []):
                value = doc.get(m.get("Name"))
                for v in value if isinstance(value, list) else [value]:
                    if isinstance(v, (int, float)):
                        yield d.get("Namespace", ""), m["Name"], values, float(v), at


class Metrics:
    """The datapoints of every `*.log` in `run_dir`, read as the logs grow."""

    def __init__(self, run_dir):
        self.run_dir = run_dir
        self.offsets = {}
        self.points = []
        self.lock = threading.Lock()

    def refresh(self):
        with self.lock:
            for path in glob.glob(os.path.join(self.run_dir, "*.log")):
                start = self.offsets.get(path, 0)
                with open(path, "rb") as f:
                    f.seek(start)
                    chunk = f.read()
                # Only whole lines: a line being written is read on the next refresh.
                whole = chunk[: chunk.rfind(b"\n") + 1]
                self.offsets[path] = start + len(whole)
                for line in whole.decode("utf-8", "replace").splitlines():
                    if line.startswith('{"_aws"'):
                        self.points.extend(datapoints(line))
            oldest = time.time() * 1000 - KEPT_MS
            if self.points and min(p[4] for p in self.points) < oldest:
                self.points = [p for p in self.points if p[4] >= oldest]

    def get_metric_data(self, form):
        """The answer to a `GetMetricData` request's form parameters, as XML."""
        self.refresh()
        start, end = when(form, "StartTime"), when(form, "EndTime")
        if end <= start:
            raise Refused("InvalidParameterValue", "The parameter EndTime must be greater than StartTime.")
        if form.get("NextToken"):
            raise Refused("InvalidNextToken", "every answer is whole on the local stack")
        newest_first = form.get("ScanBy", "TimestampDescending") == "TimestampDescending"
        results = []
        for q in members(form, "MetricDataQueries"):
            if q.get("ReturnData", "true") == "false":
                continue
            results.append(self.answer(q, start, end, newest_first))
        body = "".join(results)
        request_id = uuid.uuid4()
        return (f'<GetMetricDataResponse xmlns="{XMLNS}"><GetMetricDataResult>'
                f"<MetricDataResults>{body}</MetricDataResults><Messages/></GetMetricDataResult>"
                f"<ResponseMetadata><RequestId>{request_id}</RequestId></ResponseMetadata>"
                "</GetMetricDataResponse>")

    def answer(self, q, start, end, newest_first):
        qid = q.get("Id") or ""
        if "Expression" in q:
            raise Refused("InvalidParameterCombination", f"{qid}: metric math is not served on the local stack")
        stat = q.get("MetricStat.Stat")
        if stat not in STATS:
            raise Refused("InvalidParameterValue", f"{qid}: the statistic {stat!r} is not one of {sorted(STATS)}")
        try:
            period_ms = int(q.get("MetricStat.Period", "")) * 1000
        except ValueError:
            period_ms = 0
        if period_ms <= 0:
            raise Refused("InvalidParameterValue", f"{qid}: MetricStat.Period must be a positive number of seconds")
        namespace, name = q.get("MetricStat.Metric.Namespace"), q.get("MetricStat.Metric.MetricName")
        dims = tuple(sorted((d.get("Name"), d.get("Value")) for d in members(q, "MetricStat.Metric.Dimensions")))
        buckets = {}
        with self.lock:
            for ns, n, ds, v, at in self.points:
                if ns == namespace and n == name and ds == dims and start <= at < end:
                    buckets.setdefault(start + (at - start) // period_ms * period_ms, []).append(v)
        order = sorted(buckets, reverse=newest_first)
        stamps = "".join(f"<member>{iso(t)}</member>" for t in order)
        values = "".join(f"<member>{STATS[stat](buckets[t])!r}</member>" for t in order)
        return (f"<member><Id>{escape(qid)}</Id><Label>{escape(q.get('Label') or name or '')}</Label>"
                f"<Timestamps>{stamps}</Timestamps><Values>{values}</Values>"
                "<StatusCode>Complete</StatusCode></member>")


def members(form, prefix):
    """The Query protocol's list `prefix.member.N.*` as dicts of the rest of each key."""
    out = {}
    head = f"{prefix}.member."
    for key, value in form.items():
        if key.startswith(head):
            n, _, rest = key[len(head):].partition(".")
            if n.isdigit():
                out.setdefault(int(n), {})[rest] = value
    return [out[n] for n in sorted(out)]


def when(form, key):
    """A timestamp parameter (ISO 8601) as epoch ms."""
    raw = form.get(key, "")
    try:
        t = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise Refused("MissingParameter" if not raw else "InvalidParameterValue",
                      f"The parameter {key} is required as an ISO 8601 time") from None
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    return int(t.timestamp() * 1000)


def iso(ms):
    return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def error_xml(code, message):
    return (f'<ErrorResponse xmlns="{XMLNS}"><Error><Type>Sender</Type><Code>{escape(code)}</Code>'
            f"<Message>{escape(message)}</Message></Error><RequestId>{uuid.uuid4()}</RequestId></ErrorResponse>")


def handle(metrics, body, allowed):
    """(status, XML) for a POSTed Query-protocol request; `allowed`: whether the caller's
    role may call `cloudwatch:GetMetricData` (IAM's refusal is a 403 `AccessDenied`)."""
    form = dict(urllib.parse.parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
    if not allowed:
        return 403, error_xml("AccessDenied", "the role may not call cloudwatch:GetMetricData")
    if form.get("Action") != "GetMetricData":
        return 400, error_xml("InvalidAction", f"{form.get('Action')!r} is not served on the local stack")
    try:
        return 200, metrics.get_metric_data(form)
    except Refused as e:
        return 400, error_xml(e.code, str(e))
