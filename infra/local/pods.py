"""Game-server pods' side of stream ingest: produces match-result events to Kafka (with a
real Kafka client) or to a Kinesis stream, one JSON line per event on stdin:

    {"topic": "pod-1-score-updates", "key": "player-7", "value": {...}}   (kafka)
    {"key": "player-7", "value": {...}}                                     (kinesis)

`key` is the player id (the partition key: one player's events stay in order); `value`
is the pod's own event, sent as JSON, or a string sent as it is (e.g. a broken event).

Usage:
  pods.py topics  --bootstrap HOST:PORT [--partitions 3] TOPIC...   (create topics)
  pods.py kafka   --bootstrap HOST:PORT < events.jsonl
  pods.py kinesis --endpoint URL --stream NAME < events.jsonl
Prints {"sent": N, "seconds": S} when done.
"""

import argparse
import json
import sys
import time


def payload(value):
    return value.encode() if isinstance(value, str) else json.dumps(value).encode()


def topics(args):
    from kafka.admin import KafkaAdminClient, NewTopic
    from kafka.errors import TopicAlreadyExistsError

    admin = KafkaAdminClient(bootstrap_servers=args.bootstrap)
    for name in args.names:
        try:
            admin.create_topics([NewTopic(name, num_partitions=args.partitions, replication_factor=1)])
        except TopicAlreadyExistsError:
            pass
    admin.close()
    return 0


def kafka(args, events):
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=args.bootstrap, acks="all", linger_ms=5)
    for e in events:
        producer.send(e["topic"], key=e["key"].encode(), value=payload(e["value"]))
    producer.flush()
    producer.close()
    return len(events)


def kinesis(args, events):
    import boto3

    client = boto3.client("kinesis", endpoint_url=args.endpoint, region_name="us-east-1",
                          aws_access_key_id="local", aws_secret_access_key="local")
    # In order, 500 to a call (Kinesis keeps one partition key's records in call order).
    for i in range(0, len(events), 500):
        chunk = [{"PartitionKey": e["key"], "Data": payload(e["value"])} for e in events[i:i + 500]]
        out = client.put_records(StreamName=args.stream, Records=chunk)
        if out.get("FailedRecordCount"):
            raise SystemExit(f"{out['FailedRecordCount']} records refused")
    return len(events)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("topics")
    t.add_argument("--bootstrap", required=True)
    t.add_argument("--partitions", type=int, default=3)
    t.add_argument("names", nargs="+")
    k = sub.add_parser("kafka")
    k.add_argument("--bootstrap", required=True)
    s = sub.add_parser("kinesis")
    s.add_argument("--endpoint", required=True)
    s.add_argument("--stream", required=True)
    args = ap.parse_args()
    if args.cmd == "topics":
        return topics(args)
    events = [json.loads(line) for line in sys.stdin if line.strip()]
    start = time.monotonic()
    sent = kafka(args, events) if args.cmd == "kafka" else kinesis(args, events)
    print(json.dumps({"sent": sent, "seconds": round(time.monotonic() - start, 3)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
