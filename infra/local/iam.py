"""The functions' execution roles from template.yaml, enforced on the local DynamoDB endpoint.

In AWS every function calls DynamoDB with its execution role, and IAM refuses whatever the
role does not allow. Locally each function gets an access key naming its template entry
(`fn-<LogicalId>`, set by stack.py) and `dynamodb_server.py` checks every request signed
with such a key against that function's role exactly as SAM creates it: the template is
expanded by the SAM translator (offline) and the role's inline policies are read from the
result. Requests signed with any other key (tests, tools, the stream poller) are not
checked, as an administrator's would not be limited.

What the check understands, and on a DynamoDB, SQS, EventBridge or S3 statement nothing else (loading
fails, so a template cannot rely on something the local check would silently ignore):
- `Effect: Allow` statements with `Action` (wildcards allowed) and `Resource`: the table's
  ARN (`!GetAtt Table.Arn`), an index of it (`!Sub "${Table.Arn}/index/name"`), its stream
  (`!GetAtt Table.StreamArn`), a queue of the template (as SAM's `SQSSendMessagePolicy`
  names it), the template's event bus (`!GetAtt Bus.Arn`), or `*`;
- `Condition` `ForAllValues:StringLike` / `ForAllValues:StringEquals` on
  `dynamodb:LeadingKeys` (the partition key values a request touches).
Transactions are checked item by item against PutItem, UpdateItem, DeleteItem,
ConditionCheckItem and GetItem, as IAM does; a batch is one BatchGetItem/BatchWriteItem
access over all its keys. As in AWS, a request with no partition key (Scan) satisfies any
`ForAllValues` condition. Stream reads (GetShardIterator, GetRecords) are checked against
the stream's ARN, SQS sends against the queue's, PutEvents against the bus's, ElastiCache
calls (the Query protocol) against the replication group's ARN (`!Sub ...${RankCache}`), S3
calls (signed or presigned) against the object's ARN (`!Sub "${Bucket.Arn}/prefix/*"`). Managed policies (logging, VPC, the event
source mappings' pollers) are not read: they grant nothing the functions call themselves.
"""

import fnmatch
import json
import logging
import re
import urllib.parse
from dataclasses import dataclass, field

ACCESS_KEY_PREFIX = "fn-"
ACCOUNT = "123456789012"
REGION = "us-east-1"
_LEADING_KEYS_OPS = ("ForAllValues:StringLike", "ForAllValues:StringEquals")
_ITEM_ACTIONS = {"Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem",
                 "ConditionCheck": "ConditionCheckItem", "Get": "GetItem"}
_EQUALITY = re.compile(r"(#?[A-Za-z_][A-Za-z0-9_]*)\s*=\s*(:[A-Za-z0-9_]+)")


_SERVICES = ("dynamodb:", "sqs:", "events:", "elasticache:", "s3:")


def table_arn(table):
    return f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/{table}"


def bus_arn(name):
    return f"arn:aws:events:{REGION}:{ACCOUNT}:event-bus/{name}"


def queue_arn(url):
    """A queue's ARN from its URL (`http://host/<account>/<name>`)."""
    account, name = url.rstrip("/").rsplit("/", 2)[-2:]
    return f"arn:aws:sqs:{REGION}:{account}:{name}"


@dataclass
class Access:
    """One permission check: an action on a resource, touching these partition keys."""

    action: str
    resource: str
    leading_keys: list = field(default_factory=list)
    service: str = "dynamodb"

    def __str__(self):
        return f"{self.service}:{self.action} on {self.resource} for pk {self.leading_keys}"


@dataclass
class Statement:
    actions: list
    resources: list  # patterns with `{table}` where the template names the table
    leading_keys: tuple | None  # (operator, patterns), or None for no condition

    def allows(self, access):
        want = f"{access.service}:{access.action}".lower()
        if not any(fnmatch.fnmatchcase(want, a.lower()) for a in self.actions):
            return False
        if not any(_arn_matches(r, access.resource) for r in self.resources):
            return False
        if self.leading_keys is None:
            return True
        op, patterns = self.leading_keys
        if op == "ForAllValues:StringEquals":
            return all(k in patterns for k in access.leading_keys)
        return all(k is not None and any(fnmatch.fnmatchcase(k, p) for p in patterns)
                   for k in access.leading_keys)


_PLACEHOLDER = re.compile(r"\{(table|cache|(?:queue|bus|bucket):[A-Za-z0-9]+)\}")


def _arn_matches(pattern, arn):
    """IAM ARN wildcards: `*` any run of characters (slashes too), `?` one character.
    `{table}` stands for the template's table, whatever name a local stack gave it;
    `{queue:Name}`, `{bus:Name}` and `{bucket:Name}` for the template's queue, event bus or
    bucket `Name` (stack.py names them `<table>-Name`, a bucket in lower case)."""
    parts = []
    for i, piece in enumerate(_PLACEHOLDER.split(pattern)):
        if i % 2:
            kind, _, name = piece.partition(":")
            name = name.lower() if kind == "bucket" else name
            parts.append("[^/]+" if piece in ("table", "cache") else "[^:/]*" + re.escape(name))
        else:
            parts.append(re.escape(piece).replace(re.escape("*"), ".*").replace(re.escape("?"), "."))
    return re.fullmatch("".join(parts), arn) is not None


class Roles:
    """Each function's DynamoDB statements, and the table's partition key attribute."""

    def __init__(self, expanded):
        res = expanded["Resources"]
        self.table_resources = {n for n, r in res.items() if r["Type"] == "AWS::DynamoDB::Table"}
        self.queue_resources = {n for n, r in res.items() if r["Type"] == "AWS::SQS::Queue"}
        self.bus_resources = {n for n, r in res.items() if r["Type"] == "AWS::Events::EventBus"}
        self.cache_resources = {n for n, r in res.items() if r["Type"] == "AWS::ElastiCache::ReplicationGroup"}
        self.bucket_resources = {n for n, r in res.items() if r["Type"] == "AWS::S3::Bucket"}
        # One table in this template; its partition key is the leading key of every request.
        (table,) = self.table_resources
        self.hash_key = next(k["AttributeName"] for k in res[table]["Properties"]["KeySchema"]
                             if k["KeyType"] == "HASH")
        # A Query on an index leads with the index's partition key (`by_name`'s is `nk`).
        self.index_hash_keys = {
            i["IndexName"]: next(k["AttributeName"] for k in i["KeySchema"] if k["KeyType"] == "HASH")
            for i in res[table]["Properties"].get("GlobalSecondaryIndexes", [])}
        self.functions = {}
        for name, r in res.items():
            if r["Type"] != "AWS::Lambda::Function":
                continue
            role = r["Properties"].get("Role", {}).get("Fn::GetAtt", [None])[0]
            policies = res.get(role, {}).get("Properties", {}).get("Policies", [])
            # A policy under `Fn::If` (e.g. Kafka's, with a cluster given) is checked
            # as if its condition held.
            policies = [p["Fn::If"][1] if "Fn::If" in p else p for p in policies]
            self.functions[name] = [
                s for p in policies if isinstance(p, dict) and "PolicyDocument" in p
                for s in self._statements(name, p["PolicyDocument"].get("Statement", []))
            ]

    def _statements(self, fn, raw):
        out = []
        for s in raw:
            # A statement under `Fn::If` (the standard profile's cache, a Kinesis stream)
            # is checked as if its condition held, as a policy is.
            if "Fn::If" in s:
                s = s["Fn::If"][1]
                if s == {"Ref": "AWS::NoValue"}:
                    continue
            actions = s.get("Action", [])
            actions = [actions] if isinstance(actions, str) else actions
            if not any(a.lower().startswith(_SERVICES) or a == "*" for a in actions):
                continue
            if s.get("Effect") != "Allow" or "NotAction" in s or "NotResource" in s:
                raise ValueError(f"{fn}: only Allow statements with Action and Resource are checked locally: {s}")
            resources = s.get("Resource", [])
            resources = resources if isinstance(resources, list) else [resources]
            out.append(Statement(actions, [self._resource(fn, r) for r in resources], self._condition(fn, s)))
        return out

    def _resource(self, fn, r):
        if isinstance(r, str):
            return r
        if "Fn::GetAtt" in r and r["Fn::GetAtt"][0] in self.table_resources:
            if r["Fn::GetAtt"][1] == "Arn":
                return table_arn("{table}")
            if r["Fn::GetAtt"][1] == "StreamArn":
                return table_arn("{table}") + "/stream/*"
        if "Fn::GetAtt" in r and r["Fn::GetAtt"][0] in self.queue_resources and r["Fn::GetAtt"][1] == "Arn":
            return f"arn:aws:sqs:{REGION}:{ACCOUNT}:{{queue:{r['Fn::GetAtt'][0]}}}"
        if "Fn::GetAtt" in r and r["Fn::GetAtt"][0] in self.bus_resources and r["Fn::GetAtt"][1] == "Arn":
            return bus_arn(f"{{bus:{r['Fn::GetAtt'][0]}}}")
        if "Fn::Sub" in r and isinstance(r["Fn::Sub"], list):
            # SAM's SQS policy templates: arn:...:sqs:...:${queueName} with the queue's name.
            text, names = r["Fn::Sub"]
            queue = names.get("queueName", {}).get("Fn::GetAtt", [None, None])
            if text.endswith(":${queueName}") and queue[1] == "QueueName":
                return f"arn:aws:sqs:{REGION}:{ACCOUNT}:{{queue:{queue[0]}}}"
        if "Fn::Sub" in r and isinstance(r["Fn::Sub"], str):
            text = r["Fn::Sub"]
            for t in self.table_resources:
                text = text.replace("${" + t + ".Arn}", table_arn("{table}"))
            for c in self.cache_resources:
                text = text.replace("${" + c + "}", "{cache}")
            for b in self.bucket_resources:
                text = text.replace("${" + b + ".Arn}", f"arn:aws:s3:::{{bucket:{b}}}")
            for name, value in (("AWS::Partition", "aws"), ("AWS::Region", REGION), ("AWS::AccountId", ACCOUNT)):
                text = text.replace("${" + name + "}", value)
            if "${" not in text:
                return text
        raise ValueError(f"{fn}: a resource the local check cannot resolve: {r}")

    def _condition(self, fn, s):
        cond = s.get("Condition")
        if not cond:
            return None
        if len(cond) != 1 or next(iter(cond)) not in _LEADING_KEYS_OPS:
            raise ValueError(f"{fn}: only {_LEADING_KEYS_OPS} on dynamodb:LeadingKeys are checked locally: {cond}")
        op, body = next(iter(cond.items()))
        if set(body) != {"dynamodb:LeadingKeys"}:
            raise ValueError(f"{fn}: only dynamodb:LeadingKeys conditions are checked locally: {cond}")
        patterns = body["dynamodb:LeadingKeys"]
        return op, (patterns if isinstance(patterns, list) else [patterns])

    def denied(self, function, accesses):
        """The first access the function's role does not allow, or None."""
        statements = self.functions.get(function)
        if statements is None:
            return Access("*", f"function {function} is not in the template")
        for a in accesses:
            if not any(s.allows(a) for s in statements):
                return a
        return None


def load(template_path):
    import template_stats

    logging.getLogger("samtranslator").setLevel(logging.ERROR)
    return Roles(template_stats.expand(template_stats.read(template_path)))


def function_of(authorization, query=""):
    """The function an `Authorization: AWS4-HMAC-SHA256 Credential=fn-X/...` header names,
    or a presigned URL's `X-Amz-Credential=fn-X/...` (IAM checks a presigned request
    against its signer's role when it is used)."""
    m = (re.search(r"Credential=([^/,\s]+)/", authorization or "")
         or re.search(r"X-Amz-Credential=([^/&%]+)(?:/|%2F)", query or ""))
    if m and m.group(1).startswith(ACCESS_KEY_PREFIX):
        return m.group(1)[len(ACCESS_KEY_PREFIX):]
    return None


def accesses(target, body, hash_key, index_hash_keys=None):
    """What a DynamoDB, DynamoDB Streams, SQS or EventBridge request asks IAM for, from its
    X-Amz-Target and JSON body."""
    service, _, op = target.rpartition(".")
    if service.startswith("AmazonSQS"):
        return [Access(op, queue_arn(body.get("QueueUrl", "")), [], "sqs")]
    if service.startswith("AWSEvents"):
        if op != "PutEvents":
            return [Access(op, "*", [], "events")]
        return [Access(op, bus_arn(e.get("EventBusName") or "default"), [], "events")
                for e in body.get("Entries", [])]
    if service.startswith("DynamoDBStreams"):
        # A shard iterator (moto's) starts with the stream's ARN.
        arn = body.get("StreamArn") or body.get("ShardIterator", "*").split("|", 1)[0]
        return [Access(op, arn, [])]

    def pk(key):
        v = (key or {}).get(hash_key, {})
        return next(iter(v.values())) if v else None

    if op in ("GetItem", "DeleteItem", "UpdateItem"):
        return [Access(op, table_arn(body["TableName"]), [pk(body.get("Key"))])]
    if op == "PutItem":
        return [Access(op, table_arn(body["TableName"]), [pk(body.get("Item"))])]
    if op == "Query":
        arn = table_arn(body["TableName"])
        leading = hash_key
        if body.get("IndexName"):
            arn += f"/index/{body['IndexName']}"
            leading = (index_hash_keys or {}).get(body["IndexName"], hash_key)
        return [Access(op, arn, [_query_pk(body, leading)])]
    if op == "BatchGetItem":
        return [Access(op, table_arn(t), [pk(k) for k in spec.get("Keys", [])])
                for t, spec in body.get("RequestItems", {}).items()]
    if op == "BatchWriteItem":
        return [Access(op, table_arn(t), [pk(w.get("PutRequest", {}).get("Item") or w.get("DeleteRequest", {}).get("Key"))
                                          for w in writes])
                for t, writes in body.get("RequestItems", {}).items()]
    if op in ("TransactWriteItems", "TransactGetItems"):
        out = []
        for entry in body.get("TransactItems", []):
            kind, spec = next(iter(entry.items()))
            out.append(Access(_ITEM_ACTIONS[kind], table_arn(spec["TableName"]), [pk(spec.get("Key") or spec.get("Item"))]))
        return out
    # Table-level calls (DescribeTable, ListTables, ...).
    arn = table_arn(body["TableName"]) if "TableName" in body else "*"
    return [Access(op, arn, [])]


def is_s3(environ):
    """Whether a request is S3's: signed for it, or presigned for it."""
    auth = environ.get("HTTP_AUTHORIZATION", "") + environ.get("QUERY_STRING", "")
    return "/s3/aws4_request" in auth or "%2Fs3%2Faws4_request" in auth


def s3_accesses(method, path, query):
    """What an S3 request (path style: `/bucket/key`) asks IAM for: multipart uploads
    (begun, a part, completed) and plain puts are s3:PutObject, an abort
    s3:AbortMultipartUpload, reads (GET, HEAD) s3:GetObject, on the object's ARN; a
    request on a bucket (no key) is checked as that action on the bucket."""
    bucket, _, key = path.lstrip("/").partition("/")
    params = urllib.parse.parse_qs(query, keep_blank_values=True)
    if method in ("GET", "HEAD"):
        action = "GetObject" if key else "ListBucket"
    elif method == "DELETE":
        action = "AbortMultipartUpload" if "uploadId" in params else "DeleteObject"
    else:
        action = "PutObject"
    resource = f"arn:aws:s3:::{bucket}" + (f"/{urllib.parse.unquote(key)}" if key else "")
    return [Access(action, resource, [], "s3")]


def query_accesses(form):
    """What an ElastiCache request (the Query protocol: a form with `Action`) asks IAM for:
    a replication group's ARN where it names one, else `*`."""
    action = (form.get("Action") or [""])[0]
    group = (form.get("ReplicationGroupId") or [None])[0]
    arn = f"arn:aws:elasticache:{REGION}:{ACCOUNT}:replicationgroup:{group}" if group else "*"
    return [Access(action, arn, [], "elasticache")]


def _query_pk(body, hash_key):
    """The partition key value of a Query's key condition (None when it names none, which
    no LeadingKeys condition accepts)."""
    names = body.get("ExpressionAttributeNames", {})
    values = body.get("ExpressionAttributeValues", {})
    for name, value in _EQUALITY.findall(body.get("KeyConditionExpression", "")):
        if names.get(name, name) == hash_key and value in values:
            return next(iter(values[value].values()))
    return None


def denial(function, access):
    """The body DynamoDB answers an unauthorized request with (HTTP 400)."""
    return json.dumps({
        "__type": "com.amazon.coral.service#AccessDeniedException",
        "message": (f"User: arn:aws:sts::{ACCOUNT}:assumed-role/{function}Role/{function} is not "
                    f"authorized to perform: {access.service}:{access.action} on resource: {access.resource} "
                    f"(partition keys {access.leading_keys}) because no identity-based policy "
                    f"allows the {access.service}:{access.action} action"),
    }).encode()
