"""What the stack creates on the local endpoint before it serves: the table as the
template declares it, the template's queues, event buses, Kinesis streams, SNS topics and
buckets (named `<table>-<LogicalId>`, a bucket's in lower case, so stacks sharing an
endpoint stay apart), and the rank index's replication group as ElastiCache's control
plane describes it.
"""
import hashlib
import json

from template import logical_id


def ensure_queues(sqs, queues, table):
    """Creates the template's queues (named `<table>-<LogicalId>`), dead-letter targets
    first; returns logical id -> (url, arn)."""
    made = {}

    def make(name):
        if name in made:
            return made[name]
        props = queues[name]
        attrs = {k: str(props[k]) for k in ("VisibilityTimeout", "MessageRetentionPeriod", "DelaySeconds")
                 if k in props}
        redrive = props.get("RedrivePolicy")
        if redrive:
            target = make(logical_id(redrive["deadLetterTargetArn"]))[1]
            attrs["RedrivePolicy"] = json.dumps({"deadLetterTargetArn": target,
                                                 "maxReceiveCount": int(redrive["maxReceiveCount"])})
        url = sqs.create_queue(QueueName=f"{table}-{name}", Attributes=attrs)["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        made[name] = (url, arn)
        return made[name]

    for name in queues:
        make(name)
    return made


def ensure_buses(events, buses, table):
    """Creates the template's event buses (named `<table>-<LogicalId>`); returns logical
    id -> name."""
    made = {}
    existing = {b["Name"] for b in events.list_event_buses()["EventBuses"]}
    for name in buses:
        made[name] = f"{table}-{name}"
        if made[name] not in existing:
            events.create_event_bus(Name=made[name])
    return made


def ensure_kinesis_streams(kinesis, streams, table):
    """Creates the template's Kinesis streams (named `<table>-<LogicalId>`, two shards, so
    a player's records keep to one shard as in AWS); returns logical id -> name."""
    made = {}
    existing = set(kinesis.list_streams().get("StreamNames", []))
    for name in streams:
        made[name] = f"{table}-{name}"
        if made[name] not in existing:
            kinesis.create_stream(StreamName=made[name], ShardCount=2)
    return made


def ensure_topics(sns, topics, table):
    """Creates the template's SNS topics (named `<table>-<LogicalId>`); returns logical id
    -> ARN (creating a topic that exists answers its ARN)."""
    return {name: sns.create_topic(Name=f"{table}-{name}")["TopicArn"] for name in topics}


def bucket_name(table, name):
    """A template bucket's local name: S3 names are lower case."""
    return f"{table}-{name}".lower().replace("_", "-")


def ensure_buckets(s3, buckets, table):
    """Creates the template's (unconditional) buckets; returns logical id -> name."""
    made = {}
    existing = {b["Name"] for b in s3.list_buckets().get("Buckets", [])}
    for name in buckets:
        made[name] = bucket_name(table, name)
        if made[name] not in existing:
            s3.create_bucket(Bucket=made[name])
    return made


# The local Redis Cluster's split of the slots over its three masters (redis-cli's).
LOCAL_SHARDS = ("0-5460", "5461-10922", "10923-16383")


def ensure_cache_group(elasticache, table):
    """The rank index's replication group on the control plane (moto): three shards of a
    primary and a replica, with the local Redis Cluster's slots; returns its id."""
    group = "rank-" + hashlib.sha1(table.encode()).hexdigest()[:12]
    try:
        elasticache.describe_replication_groups(ReplicationGroupId=group)
        return group
    except elasticache.exceptions.ReplicationGroupNotFoundFault:
        pass
    elasticache.create_replication_group(
        ReplicationGroupId=group, ReplicationGroupDescription=f"rank index of {table}", Engine="redis",
        CacheNodeType="cache.t4g.micro", ClusterMode="enabled", NumNodeGroups=len(LOCAL_SHARDS),
        ReplicasPerNodeGroup=1,
        NodeGroupConfiguration=[{"NodeGroupId": f"{i + 1:04}", "Slots": slots, "ReplicaCount": 1}
                                for i, slots in enumerate(LOCAL_SHARDS)])
    return group


def ensure_table(dynamodb, tpl, table):
    """Creates the table from the template's ScoresTable definition if it is missing."""
    existing = dynamodb.list_tables()["TableNames"]
    if table in existing:
        return False
    props = next(
        r["Properties"] for r in tpl["Resources"].values() if r.get("Type") == "AWS::DynamoDB::Table"
    )
    extra = {}
    if props.get("GlobalSecondaryIndexes"):
        extra["GlobalSecondaryIndexes"] = props["GlobalSecondaryIndexes"]
    dynamodb.create_table(
        TableName=table,
        AttributeDefinitions=props["AttributeDefinitions"],
        KeySchema=props["KeySchema"],
        BillingMode=props.get("BillingMode", "PAY_PER_REQUEST"),
        StreamSpecification={"StreamEnabled": True, **props["StreamSpecification"]},
        **extra,
    )
    ttl = props.get("TimeToLiveSpecification")
    if ttl:
        dynamodb.update_time_to_live(TableName=table, TimeToLiveSpecification=ttl)
    return True


def condition_holds(tpl, name, params):
    """Whether the template's condition `name` holds with these parameter values (the
    forms the webhooks' conditions use: Equals, Not, And, Or, Condition, Ref)."""
    def value(v):
        if isinstance(v, dict) and set(v) == {"Ref"}:
            return params.get(v["Ref"], "")
        return v

    def holds(c):
        (op, arg), = c.items()
        if op == "Condition":
            return holds(tpl["Conditions"][arg])
        if op == "Equals":
            return str(value(arg[0])) == str(value(arg[1]))
        if op == "Not":
            return not holds(arg[0])
        if op == "And":
            return all(holds(a) for a in arg)
        if op == "Or":
            return any(holds(a) for a in arg)
        raise ValueError(f"condition form {op} is not played locally")

    return holds(tpl["Conditions"][name])


def ensure_webhooks(events, secrets, tpl, table, bus, queues, params):
    """The template's webhooks (docs/webhooks.md) as its parameters turn them on: the
    connection (its header's value read from the secret WebhookSecretArn names), an API
    destination and a rule per event type whose parameter names an endpoint, each rule's
    target with its retry policy and dead-letter queue. Delivered by the endpoint's
    stand-in (webhooks.py). Returns the event types turned on."""
    res = tpl["Resources"]
    on = {k: r for k, r in res.items() if r.get("Condition") and condition_holds(tpl, r["Condition"], params)}
    connection = next((k for k, r in on.items() if r["Type"] == "AWS::Events::Connection"), None)
    if connection is None:
        return []
    auth = res[connection]["Properties"]["AuthParameters"]["ApiKeyAuthParameters"]
    secret = secrets.get_secret_value(SecretId=params["WebhookSecretArn"])["SecretString"]
    name = f"{table}-{connection}"
    # A stack started again on its table makes them again (the endpoint may list every
    # stack's, whatever the prefix asked: each is matched by its whole name).
    if any(c["Name"] == name for c in events.list_connections(NamePrefix=name)["Connections"]):
        events.delete_connection(Name=name)
    conn_arn = events.create_connection(
        Name=name, AuthorizationType="API_KEY",
        AuthParameters={"ApiKeyAuthParameters": {"ApiKeyName": params.get(auth["ApiKeyName"]["Ref"]),
                                                 "ApiKeyValue": secret}})["ConnectionArn"]
    turned_on = []
    for logical, r in on.items():
        if r["Type"] != "AWS::Events::Rule":
            continue
        props = r["Properties"]
        target = props["Targets"][0]
        dest = res[logical_id(target["Arn"])]["Properties"]
        dest_name = f"{table}-{logical_id(target['Arn'])}"
        if any(d["Name"] == dest_name for d in events.list_api_destinations(NamePrefix=dest_name)["ApiDestinations"]):
            events.delete_api_destination(Name=dest_name)
        dest_arn = events.create_api_destination(
            Name=dest_name, ConnectionArn=conn_arn,
            InvocationEndpoint=params[dest["InvocationEndpoint"]["Ref"]], HttpMethod=dest["HttpMethod"],
            InvocationRateLimitPerSecond=int(params[dest["InvocationRateLimitPerSecond"]["Ref"]]),
        )["ApiDestinationArn"]
        rule = f"{table}-{logical}"
        events.put_rule(Name=rule, EventBusName=bus, EventPattern=json.dumps(props["EventPattern"]))
        retry = target["RetryPolicy"]
        events.put_targets(Rule=rule, EventBusName=bus, Targets=[{
            "Id": target["Id"], "Arn": dest_arn, "RoleArn": f"arn:aws:iam::000000000000:role/{table}-WebhookRole",
            "RetryPolicy": {"MaximumRetryAttempts": int(params[retry["MaximumRetryAttempts"]["Ref"]]),
                            "MaximumEventAgeInSeconds": int(params[retry["MaximumEventAgeInSeconds"]["Ref"]])},
            "DeadLetterConfig": {"Arn": queues[logical_id(target["DeadLetterConfig"]["Arn"])][1]}}])
        turned_on.append(props["EventPattern"]["detail-type"][0])
    return turned_on
