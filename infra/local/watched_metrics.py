"""Every metric template.yaml's alarms and dashboard name, and which function answers each
HTTP route: what the operations test (tests/e2e/operations.rs) checks the functions emit.

Prints one JSON document:
  {"watched": [{"where", "namespace", "name", "dimensions": {name: value} | null,
                "dimension_names": [...]}],
   "routes": {"GET /leaderboards/{lb}/top": "TopFunction", ...}}
`dimensions` is null for a dashboard SEARCH expression, which names only the metric and
its dimensions' names. A dimension value that is no literal (`!Ref`, `!Sub`) is printed
as the intrinsic, as data.

Usage: watched_metrics.py [template.yaml]
"""
import json
import re
import sys

import template

SEARCH = re.compile(r"SEARCH\('\{([^}]*)\}\s+MetricName=\"([^\"]+)\"")


def metric(where, namespace, name, dims):
    return {"where": where, "namespace": namespace, "name": name,
            "dimensions": {d["Name"]: d["Value"] for d in dims or []},
            "dimension_names": sorted(d["Name"] for d in dims or [])}


def alarm_metrics(ident, props):
    if "MetricName" in props:
        yield metric(ident, props["Namespace"], props["MetricName"], props.get("Dimensions"))
    for query in props.get("Metrics", []):
        stat = query.get("MetricStat")
        if stat:
            m = stat["Metric"]
            yield metric(ident, m["Namespace"], m["MetricName"], m.get("Dimensions"))


def dashboard_metrics(ident, props):
    body = props["DashboardBody"]
    text = body["Sub"] if isinstance(body, dict) else body
    # `${Resource}` placeholders sit inside JSON strings: their names keep it JSON.
    doc = json.loads(re.sub(r"\$\{([^}]*)\}", r"\1", text))
    for widget in doc["widgets"]:
        for row in widget.get("properties", {}).get("metrics", []):
            head = [x for x in row if isinstance(x, str)]
            if head:
                pairs = head[2:]
                dims = [{"Name": k, "Value": v} for k, v in zip(pairs[::2], pairs[1::2])]
                yield metric(f"{ident}: {widget['properties']['title']}", head[0], head[1], dims)
                continue
            expression = next((x.get("expression", "") for x in row if isinstance(x, dict)), "")
            found = SEARCH.search(expression)
            if found:
                namespace, *names = [p.strip() for p in found.group(1).split(",")]
                yield {"where": f"{ident}: {widget['properties']['title']}", "namespace": namespace,
                       "name": found.group(2), "dimensions": None, "dimension_names": sorted(names)}


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "template.yaml"
    raw = template.load_template(path)
    watched = []
    for ident, res in raw["Resources"].items():
        if not isinstance(res, dict):  # Fn::ForEach (the Kafka mappings)
            continue
        kind, props = res.get("Type"), res.get("Properties", {})
        if kind == "AWS::CloudWatch::Alarm":
            watched.extend(alarm_metrics(ident, props))
        elif kind == "AWS::CloudWatch::Dashboard":
            watched.extend(dashboard_metrics(ident, props))
    routes = {r.key: r.function for r in template.read_template(path).routes}
    json.dump({"watched": watched, "routes": routes}, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
