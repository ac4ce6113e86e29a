"""Expands template.yaml with the SAM translator (offline, as `sam deploy` would after
packaging) and prints what CloudFormation would create, by type.

Usage: template_stats.py [--summary] [template.yaml]
"""

import collections
import os
import sys

from samtranslator.translator.transform import transform
from samtranslator.yaml_helper import yaml_parse


class NoManagedPolicies:
    """The translator asks IAM for AWS managed policy ARNs; none are needed offline."""

    def load(self):
        return {}


def read(path):
    with open(path, encoding="utf-8") as f:
        return yaml_parse(f.read())


def expand(tpl):
    """The template as CloudFormation receives it from `sam deploy`, without a network."""
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    # What `sam package` does to local code: an S3 location.
    for res in tpl["Resources"].values():
        if res.get("Type") == "AWS::Serverless::Function":
            res.setdefault("Properties", {})["CodeUri"] = "s3://packaged/code.zip"
    tpl.get("Globals", {}).get("Function", {}).pop("CodeUri", None)
    return transform(tpl, {}, NoManagedPolicies())


def main():
    args = [a for a in sys.argv[1:] if a != "--summary"]
    tpl = read(args[0] if args else "template.yaml")
    count = len(tpl["Resources"])
    res = expand(tpl)["Resources"]
    optional = sum(1 for r in res.values() if "Condition" in r)
    print(f"{count} resources in template.yaml -> {len(res)} CloudFormation "
          f"resources ({optional} of them optional: NatGateway, AlarmEmail)")
    if "--summary" in sys.argv:
        return
    for kind, n in sorted(collections.Counter(r["Type"] for r in res.values()).items()):
        print(f"  {n:3} {kind}")


if __name__ == "__main__":
    main()
