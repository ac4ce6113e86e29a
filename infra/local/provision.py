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
