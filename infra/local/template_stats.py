"""Expands template.yaml with the SAM translator (offline, as `sam deploy` would after
packaging) and prints what CloudFormation would create, by type; `--summary` prints the
one line docs/deploying.md carries (infra/scripts/check_prose.py holds it to it).

Usage: template_stats.py [--summary] [template.yaml]
"""

import collections
import os
import re
import sys



class NoManagedPolicies:
    """The translator asks IAM for AWS managed policy ARNs; none are needed offline."""

    def load(self):
        return {}


def read(path):
    # The SAM translator is imported where it is used: the local stack imports this
    # module for `expand_for_each` alone, and the translator took an eighth of its start.
    from samtranslator.yaml_helper import yaml_parse

    with open(path, encoding="utf-8") as f:
        return yaml_parse(f.read())


def _with(node, ident, value):
    """`node` with the loop variable `ident` replaced by `value` (`!Ref`, `${ident}`)."""
    if isinstance(node, dict):
        if node == {"Ref": ident}:
            return value
        if set(node) == {"Fn::Sub"} and isinstance(node["Fn::Sub"], str):
            return {"Fn::Sub": node["Fn::Sub"].replace("${" + ident + "}", value)}
        return {k: _with(v, ident, value) for k, v in node.items()}
    if isinstance(node, list):
        return [_with(v, ident, value) for v in node]
    return node


def expand_for_each(tpl, values=None):
    """AWS::LanguageExtensions' `Fn::ForEach` in Resources, as CloudFormation expands it
    before SAM: the collection is a list or a `!Ref` to a CommaDelimitedList parameter
    (its default, or `values[parameter]`); `&{x}` in a logical id is the value with its
    non-alphanumerics dropped. The transform itself is then taken off the list."""
    params = tpl.get("Parameters", {})
    resources = {}
    for name, res in tpl.get("Resources", {}).items():
        if not name.startswith("Fn::ForEach::"):
            resources[name] = res
            continue
        ident, collection, body = res
        if isinstance(collection, dict) and "Ref" in collection:
            raw = (values or {}).get(collection["Ref"], params[collection["Ref"]].get("Default", ""))
            collection = raw if isinstance(raw, list) else [v.strip() for v in str(raw).split(",")]
        for value in collection:
            for key, item in body.items():
                key = key.replace("&{" + ident + "}", re.sub(r"[^A-Za-z0-9]", "", value))
                resources[key.replace("${" + ident + "}", value)] = _with(item, ident, value)
    tpl["Resources"] = resources
    transform = tpl.get("Transform")
    if isinstance(transform, list):
        rest = [t for t in transform if t != "AWS::LanguageExtensions"]
        tpl["Transform"] = rest[0] if len(rest) == 1 else rest
    return tpl


def expand(tpl):
    """The template as CloudFormation receives it from `sam deploy`, without a network."""
    from samtranslator.translator.transform import transform

    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    tpl = expand_for_each(tpl)
    # What `sam package` does to local code: an S3 location.
    for res in tpl["Resources"].values():
        if res.get("Type") == "AWS::Serverless::Function":
            res.setdefault("Properties", {})["CodeUri"] = "s3://packaged/code.zip"
    tpl.get("Globals", {}).get("Function", {}).pop("CodeUri", None)
    return transform(tpl, {}, NoManagedPolicies())


def main():
    args = [a for a in sys.argv[1:] if a != "--summary"]
    tpl = read(args[0] if args else "template.yaml")
    resources = expand_for_each(tpl)["Resources"]
    count = len(resources)
    functions = sum(1 for r in resources.values() if r.get("Type") == "AWS::Serverless::Function")
    res = expand(tpl)["Resources"]
    optional = sum(1 for r in res.values() if "Condition" in r)
    print(f"{functions} functions; {count} resources in template.yaml -> {len(res)} CloudFormation "
          f"resources ({optional} of them optional: the profile's, NatGateway, AlarmEmail, the Kafka mappings, the Kinesis stream, LivePush, the webhooks)")
    if "--summary" in sys.argv:
        return
    for kind, n in sorted(collections.Counter(r["Type"] for r in res.values()).items()):
        print(f"  {n:3} {kind}")


if __name__ == "__main__":
    main()
