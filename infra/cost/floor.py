"""What a stack costs a month before its first player, read from template.yaml, and what a
million results cost on top, from the benchmark's measured units.

Each profile is a set of the template's parameters (PROFILES); its Conditions are
evaluated with them, and every resource that exists and has a price by the hour or the
month is listed and priced from the dated table beside this script (prices.json). The
per-result rows read a benchmark result (`bench --matches-only`'s matches.json): the
requests, Lambda GB-seconds, log bytes and DynamoDB units one result costs each way.

Usage: floor.py [--bench matches.json] [--check docs/cost.md] [template.yaml]
`--check` fails unless the doc carries exactly this output between its
`<!-- floor.py -->` and `<!-- /floor.py -->` lines (the test command runs it).
"""

import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "infra", "local"))
from template import load_template  # noqa: E402
from template_stats import expand_for_each  # noqa: E402

# The profiles a studio deploys: the template's defaults, and what a small game sets.
PROFILES = {"standard": {}, "small": {"Profile": "small"}}
BENCH = os.path.join(ROOT, "bench", "results", "matches-2026-12-02", "matches.json")


class Stack:
    """The template as deployed with `values` over its parameters' defaults."""

    def __init__(self, tpl, values):
        self.tpl = expand_for_each(tpl, values)
        self.params = {k: str(v.get("Default", "")) for k, v in tpl.get("Parameters", {}).items()}
        self.params.update(values)
        self.conditions = {}

    def value(self, node):
        """A property's value as deployed: `Ref`s to parameters and `Fn::If` resolved."""
        if isinstance(node, dict):
            if set(node) == {"Ref"} and node["Ref"] in self.params:
                return self.params[node["Ref"]]
            if set(node) in ({"Fn::If"}, {"If"}):
                cond, yes, no = next(iter(node.values()))
                return self.value(yes if self.holds(cond) else no)
            return {k: self.value(v) for k, v in node.items()}
        if isinstance(node, list):
            return [v for v in map(self.value, node) if v != {"Ref": "AWS::NoValue"}]
        return node

    def holds(self, name):
        if name not in self.conditions:
            self.conditions[name] = self.test(self.tpl["Conditions"][name])
        return self.conditions[name]

    def test(self, node):
        (fn, args), = node.items()
        fn = fn.removeprefix("Fn::")
        if fn == "Equals":
            a, b = (str(self.value(x)) for x in args)
            return a == b
        if fn == "Not":
            return not self.test(args[0])
        if fn == "And":
            return all(self.test(a) for a in args)
        if fn == "Or":
            return any(self.test(a) for a in args)
        if fn == "Condition":
            return self.holds(args)
        raise ValueError(f"a condition this script cannot read: {node}")

    def resources(self):
        for name, res in self.tpl["Resources"].items():
            if "Condition" in res and not self.holds(res["Condition"]):
                continue
            yield name, res["Type"], self.value(res.get("Properties", {}))


def alarm_metrics(props):
    """Metrics an alarm is billed for: one, or each metric a metric-math alarm reads."""
    if "Metrics" in props:
        return sum(1 for m in props["Metrics"] if "MetricStat" in m)
    return 1


def fixed_lines(stack, p):
    """(what, how it is priced, $ a month) for each resource with a fixed price."""
    hours = p["hours_per_month"]
    lines = []
    alarms = [0, 0]  # standard, high-resolution metrics
    routes = 0
    detailed = False
    for name, kind, props in stack.resources():
        if kind == "AWS::ElastiCache::ReplicationGroup":
            engine = props.get("Engine", "redis")
            node = props["CacheNodeType"]
            nodes = int(props.get("NumNodeGroups", 1)) * (1 + int(props.get("ReplicasPerNodeGroup", 0)))
            rate = p["elasticache_node_hour"][engine][node]
            lines.append((f"{name}: {nodes} x {node} ({engine})", f"{nodes} x ${rate}/h", nodes * rate * hours))
        elif kind == "AWS::ElastiCache::ServerlessCache":
            engine = props.get("Engine", "redis")
            gb, rate = p["elasticache_serverless_min_gb"][engine], p["elasticache_serverless_gb_hour"][engine]
            lines.append((f"{name}: serverless ({engine}), its least data stored", f"{gb} GB x ${rate}/GB-h", gb * rate * hours))
        elif kind == "AWS::EC2::VPCEndpoint" and props.get("VpcEndpointType") == "Interface":
            service = props["ServiceName"]
            service = next(iter(service.values())) if isinstance(service, dict) else service
            service = service.rsplit(".", 1)[-1]
            azs = len(props.get("SubnetIds", []))
            rate = p["interface_endpoint_az_hour"]
            lines.append((f"{name}: interface endpoint ({service})", f"{azs} AZ x ${rate}/h", azs * rate * hours))
        elif kind == "AWS::EC2::NatGateway":
            lines.append((f"{name}: NAT gateway", f"${p['nat_gateway_hour']}/h", p["nat_gateway_hour"] * hours))
        elif kind == "AWS::EC2::EIP":
            lines.append((f"{name}: public IPv4 address", f"${p['public_ipv4_hour']}/h", p["public_ipv4_hour"] * hours))
        elif kind == "AWS::Kinesis::Stream" and props.get("StreamModeDetails", {}).get("StreamMode") == "ON_DEMAND":
            rate = p["kinesis_on_demand_stream_hour"]
            lines.append((f"{name}: Kinesis stream (on demand)", f"${rate}/h", rate * hours))
        elif kind == "AWS::SecretsManager::Secret":
            lines.append((f"{name}: secret", f"${p['secret_month']:.2f}/month", p["secret_month"]))
        elif kind == "AWS::CloudWatch::Dashboard":
            lines.append((f"{name}: dashboard", f"${p['dashboard_month']:.2f}/month", p["dashboard_month"]))
        elif kind == "AWS::CloudWatch::Alarm":
            high = any(int(m.get("MetricStat", {}).get("Period", 60)) < 60 for m in props.get("Metrics", [])) \
                or int(props.get("Period", 60)) < 60
            alarms[high] += alarm_metrics(props)
        elif kind == "AWS::Serverless::HttpApi":
            settings = props.get("DefaultRouteSettings", {})
            detailed = str(settings.get("DetailedMetricsEnabled", "false")).lower() == "true"
        elif kind == "AWS::Serverless::Function":
            routes += sum(1 for ev in props.get("Events", {}).values() if ev.get("Type") == "HttpApi")
    if alarms[0]:
        rate = p["alarm_metric_month"]
        lines.append((f"{alarms[0]} alarm metrics", f"{alarms[0]} x ${rate:.2f}/month", alarms[0] * rate))
    if alarms[1]:
        rate = p["high_resolution_alarm_metric_month"]
        lines.append((f"{alarms[1]} high-resolution alarm metrics", f"{alarms[1]} x ${rate:.2f}/month", alarms[1] * rate))
    if detailed:
        n = routes * p["http_api_detailed_metrics_per_route"]
        rate = p["custom_metric_month"]
        lines.append((f"per-route detailed metrics of {routes} routes (billed for each hour a route is called)",
                      f"{n} metrics x ${rate:.2f}/month", n * rate))
    return lines


def per_result(bench, p):
    """Per million results, each way the benchmark measured: $ by line, and the total."""
    m = bench["matches"]
    rows = []
    for label, side in [("`POST /scores`, one request per result", m["small_per_player"]),
                        (f"`POST /matches`, {m['small_players']}-player matches", m["small_whole"])]:
        # The side's numbers are per match of `small_players` results.
        requests = 1e6 / (m["small_players"] / side["api_requests"])
        gb_s = side["lambda_gb_seconds"] / side["api_requests"] * requests
        log_gb = side["log_bytes"] / side["api_requests"] * requests / 2**30
        cost = {
            "API Gateway": requests / 1e6 * p["http_api_per_million_requests"],
            "Lambda": requests / 1e6 * p["lambda_per_million_requests"] + gb_s * p["lambda_arm_gb_second"],
            "logs": log_gb * p["logs_ingested_gb"],
            "DynamoDB": side["write_units_per_player"] * p["dynamodb_on_demand_per_million_write_units"]
            + side["read_units_per_player"] * p["dynamodb_on_demand_per_million_read_units"],
        }
        rows.append((label, cost))
    return rows


# An export of a million standings, from its calls (shared/core/src/service/export/run.rs): the walk's
# keys-only queries of the rank order (about 100 bytes an item, eventually consistent),
# one eventually consistent BatchGetItem read of each standing (its metadata) and of each
# player's card (their name), the progress item saved with each part and every 20 s (about
# 2 KB with its parts' ETags), the file's parts in S3 (a line is about 100 bytes: 74 in
# tests/e2e/exports.rs, with names and metadata) kept the bucket's 7 days and read once.
# The Lambda time is an estimate (10 sequential BatchGetItem calls of 15 ms a page of
# 1,000, both reads at once: about 200 s of the 1 GB seal function), not a measurement.
EXPORT = {"rows": 1e6, "index_item_bytes": 100, "line_bytes": 100, "part_bytes": 5 * 2**20,
          "progress_wru": 2, "lease_renewal_s": 20, "lambda_s": 200, "lambda_gb": 1.0, "kept_days": 7}


def per_export(p):
    """An export of a million rows, by line."""
    e = EXPORT
    file_gb = e["rows"] * e["line_bytes"] / 2**30
    parts = -(-e["rows"] * e["line_bytes"] // e["part_bytes"])
    read_units = e["rows"] * e["index_item_bytes"] / 4096 * 0.5 + 2 * e["rows"] * 0.5
    saves = parts + e["lambda_s"] / e["lease_renewal_s"] + 2
    return [
        ("DynamoDB reads: the rank order walked, each standing's metadata, each player's name",
         f"{read_units:,.0f} read units", read_units / 1e6 * p["dynamodb_on_demand_per_million_read_units"]),
        ("DynamoDB writes: the job's progress", f"{saves:,.0f} saves x {e['progress_wru']} write units",
         saves * e["progress_wru"] / 1e6 * p["dynamodb_on_demand_per_million_write_units"]),
        ("Lambda (estimated)", f"{e['lambda_s']} s x {e['lambda_gb']:g} GB",
         e["lambda_s"] * e["lambda_gb"] * p["lambda_arm_gb_second"]),
        ("S3 requests", f"{parts + 2:,.0f} PUTs, 1 GET",
         (parts + 2) / 1000 * p["s3_put_per_thousand_requests"] + p["s3_get_per_thousand_requests"] / 1000),
        ("S3 storage", f"{file_gb * 1024:,.0f} MB for {e['kept_days']} days",
         file_gb * p["s3_standard_gb_month"] * e["kept_days"] / 30),
        ("the file read once, out of AWS", f"{file_gb * 1024:,.0f} MB", file_gb * p["data_transfer_out_gb"]),
    ]


# A reset of a million standings, from its calls (shared/core/src/service/seal/reset.rs). The
# seal's walk of the rank order (keys only, about 100 bytes an item, eventually consistent)
# writes one history row per standing (BatchWriteItem, under 1 KB: a write unit each), then
# the results (the top 1,000, about 100 KB) and the seal's progress a page of 1,000 at a
# time. A second walk takes each standing off: a strongly consistent read of its row (under
# 4 KB) and the PutItem of its tombstone (under 1 KB), which takes its entry out of the rank
# order too (a write unit on the index). The Lambda time is an estimate (the history's
# BatchWriteItem calls of 25 and 16 standings taken off at once, at about 10 ms a call:
# about 1,000 s of the 1 GB seal function), not a measurement. The tombstones' stream
# records reach the projector as any result's do (the per-result figures above).
RESET = {"rows": 1e6, "index_item_bytes": 100, "page": 1000, "results_wru": 100,
         "lambda_s": 1000, "lambda_gb": 1.0}


def per_reset(p):
    """A reset of a board of a million standings, by line."""
    r = RESET
    wru, rru = p["dynamodb_on_demand_per_million_write_units"], p["dynamodb_on_demand_per_million_read_units"]
    reads = 2 * r["rows"] * r["index_item_bytes"] / 4096 * 0.5 + r["rows"]
    sealed = r["results_wru"] + r["rows"] / r["page"]
    return [
        ("DynamoDB reads: the rank order walked twice, each row read before its tombstone",
         f"{reads:,.0f} read units", reads / 1e6 * rru),
        ("DynamoDB writes: a history row per standing", f"{r['rows']:,.0f} write units", r["rows"] / 1e6 * wru),
        ("DynamoDB writes: each tombstone, and its entry out of the rank order",
         f"{2 * r['rows']:,.0f} write units", 2 * r["rows"] / 1e6 * wru),
        ("DynamoDB writes: the archive's results and the seal's progress", f"{sealed:,.0f} write units",
         sealed / 1e6 * wru),
        ("Lambda (estimated)", f"{r['lambda_s']} s x {r['lambda_gb']:g} GB",
         r["lambda_s"] * r["lambda_gb"] * p["lambda_arm_gb_second"]),
    ]


# A window's seal with a reward table, per 1,000 participants, every one of them paid
# (the most a table costs): the walk's keys, a history row each, the results (the top,
# about 80 bytes a place), a reward item each (under 1 KB: one write unit), the seal's
# progress, and the `rewards.decided` event (about 150 bytes a reward, billed in 64 KB
# chunks); and a claim: its request, a short invocation of the 256 MB function, the
# conditional claim and the mark that its event is out, and the event.
REWARDS = {"players": 1000, "index_item_bytes": 100, "place_bytes": 80, "reward_bytes": 150,
           "saves": 6, "lambda_s": 2, "lambda_gb": 1.0}
CLAIM = {"lambda_ms": 30, "lambda_gb": 0.25, "write_units": 2, "events": 1}


def per_rewards(p):
    """A seal with rewards of 1,000 participants, by line."""
    r = REWARDS
    wru, rru = p["dynamodb_on_demand_per_million_write_units"], p["dynamodb_on_demand_per_million_read_units"]
    reads = r["players"] * r["index_item_bytes"] / 4096 * 0.5
    results = -(-r["players"] * r["place_bytes"] // 1024)
    writes = r["players"] + results + r["players"] + r["saves"]
    chunks = -(-r["players"] * r["reward_bytes"] // (64 * 1024))
    return [
        ("DynamoDB reads: the rank order walked", f"{reads:,.0f} read units", reads / 1e6 * rru),
        ("DynamoDB writes: a history row and a reward each, the results, the progress",
         f"{writes:,.0f} write units", writes / 1e6 * wru),
        ("EventBridge: `rewards.decided` (and `window.closed`)", f"{chunks + 1} events of 64 KB",
         (chunks + 1) / 1e6 * p["eventbridge_per_million_events"]),
        ("Lambda (estimated)", f"{r['lambda_s']} s x {r['lambda_gb']:g} GB",
         r["lambda_s"] * r["lambda_gb"] * p["lambda_arm_gb_second"]),
    ]


def per_claim(p):
    """A million claims, by line."""
    c = CLAIM
    return [
        ("API Gateway", "1,000,000 requests", p["http_api_per_million_requests"]),
        ("Lambda", f"1,000,000 x {c['lambda_ms']} ms x {c['lambda_gb']:g} GB",
         p["lambda_per_million_requests"] + 1e6 * c["lambda_ms"] / 1000 * c["lambda_gb"] * p["lambda_arm_gb_second"]),
        ("DynamoDB writes: the conditional claim, then its event marked out",
         f"{c['write_units']:,} write units each", c["write_units"] * p["dynamodb_on_demand_per_million_write_units"]),
        ("EventBridge: `reward.claimed`", "1,000,000 events", c["events"] * p["eventbridge_per_million_events"]),
    ]


def lines_table(title, lines, places):
    """One costed operation as a table of its lines and their total, `places` decimals."""
    out = ["", title, "", "| what | how much | cost |", "|---|---|---:|"]
    out += [f"| {what} | {how} | ${x:,.{places}f} |" for what, how, x in lines]
    out.append(f"| **total** | | **${sum(x for _, _, x in lines):,.{places}f}** |")
    return out


def money(x):
    return f"${x:,.2f}"


def report(tpl, bench, p):
    out = [f"Prices: {p['region']} list prices as of {p['as_of']} (`infra/cost/prices.json`). "
           f"Made by `.venv/bin/python infra/cost/floor.py`.", ""]
    for profile, values in PROFILES.items():
        lines = fixed_lines(Stack(tpl, values), p)
        out += [f"**{profile}** profile, before the first player:", "",
                "| resource | priced as | per month |", "|---|---|---:|"]
        out += [f"| {what} | {how} | {money(x)} |" for what, how, x in lines]
        out += [f"| **total** | | **{money(sum(x for _, _, x in lines))}** |", ""]
    rows = per_result(bench, p)
    names = list(rows[0][1])
    out += [f"Per million results on top (a family of 6 boards, measured by `{bench['command']}`):", "",
            "| posted as | " + " | ".join(names) + " | total |", "|---|" + "---:|" * (len(names) + 1)]
    for label, cost in rows:
        out.append(f"| {label} | " + " | ".join(money(cost[n]) for n in names) + f" | {money(sum(cost.values()))} |")
    out += lines_table("An export of a million standings (`POST /leaderboards/{lb}/exports`), from its calls:",
                       per_export(p), 4)
    out += lines_table("A reset of a board of a million standings (`POST /leaderboards/{lb}/reset`), from its calls:",
                       per_reset(p), 4)
    out += lines_table("A window's seal with a reward table, per 1,000 participants, every one paid (docs/rewards.md):",
                       per_rewards(p), 6)
    claims = per_claim(p)
    out += lines_table("A million claims (`POST /me/rewards/{id}/claim`), one reward each:", claims, 2)
    out[-1] = out[-1][:-2] + f" (${sum(x for _, _, x in claims) / 1e6:.7f} a claim) |"
    return "\n".join(out) + "\n"


def main(argv):
    bench, check, path = BENCH, None, os.path.join(ROOT, "template.yaml")
    args = iter(argv)
    for a in args:
        if a == "--bench":
            bench = next(args)
        elif a == "--check":
            check = next(args)
        else:
            path = a
    with open(os.path.join(HERE, "prices.json"), encoding="utf-8") as f:
        prices = json.load(f)
    with open(bench, encoding="utf-8") as f:
        measured = json.load(f)
    text = report(load_template(path), measured, prices)
    if check is None:
        sys.stdout.write(text)
        return 0
    with open(check, encoding="utf-8") as f:
        doc = f.read()
    found = re.search(r"<!-- floor\.py -->\n(.*?)<!-- /floor\.py -->", doc, re.S)
    if found is None or found.group(1) != text:
        sys.stderr.write(f"{check} does not carry floor.py's output; run it and paste:\n{text}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
