"""Publishes the operator console to a stack deployed with `Console=true`
(docs/console.md): its built files (`npm ci && npm run build` in infra/console) and a
`config.json` made from the stack's outputs (the API's URL, the user pool, its client, the
identity pool, the sign-in page) go to the stack's console bucket, served by CloudFront.

Usage: .venv/bin/python infra/console/publish.py --stack NAME [--region REGION]
(the AWS credentials of the environment, as the AWS CLI takes them).
"""
import argparse
import json
import mimetypes
import os
import sys

DIST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dist")


def config_of(outputs):
    """The console's config.json from the stack's outputs (OutputKey -> OutputValue)."""
    missing = [k for k in ("ApiUrl", "ConsoleSignIn", "ConsoleBucketName", "ConsoleUrl") if k not in outputs]
    if missing:
        raise SystemExit(f"the stack has no {', '.join(missing)} output: deploy it with Console=true")
    return {"mode": "aws", "api": outputs["ApiUrl"], **json.loads(outputs["ConsoleSignIn"])}


def upload(s3, bucket, dist, config):
    """Puts every built file and config.json; every object is revalidated on each load
    (no-cache: a new console reaches operators at once). Returns the keys written."""
    if not os.path.isfile(os.path.join(dist, "app.js")):
        raise SystemExit(f"the console is not built ({dist}): npm ci && npm run build in infra/console")
    written = []
    for name in sorted(os.listdir(dist)):
        path = os.path.join(dist, name)
        if not os.path.isfile(path):
            continue
        kind = mimetypes.guess_type(name)[0] or "application/octet-stream"
        with open(path, "rb") as f:
            s3.put_object(Bucket=bucket, Key=name, Body=f.read(), ContentType=kind, CacheControl="no-cache")
        written.append(name)
    s3.put_object(Bucket=bucket, Key="config.json", Body=json.dumps(config).encode(),
                  ContentType="application/json", CacheControl="no-cache")
    return written + ["config.json"]


def main():
    import boto3

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--stack", required=True)
    ap.add_argument("--region", default=None)
    args = ap.parse_args()
    cfn = boto3.client("cloudformation", region_name=args.region)
    stack = cfn.describe_stacks(StackName=args.stack)["Stacks"][0]
    outputs = {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}
    config = config_of(outputs)
    keys = upload(boto3.client("s3", region_name=args.region), outputs["ConsoleBucketName"], DIST, config)
    print(f"published {len(keys)} files; the console: {outputs['ConsoleUrl']}", file=sys.stderr)


if __name__ == "__main__":
    main()
