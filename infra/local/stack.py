"""The local stand-in for what AWS runs around the functions, wired in one process on
loopback: this file only reads the arguments, creates what the template declares
(`provision`), starts each function (`lambda_host`), the event source mappings
(`streams`, `kafka_mapping`, `queue_mapping`), the schedules (`schedules`), the social
graph (`social`), the events API (`events`) and the API's gateway (`gateway`), and
stops them. What each module stands in for, and why it is not LocalStack or
`sam local`: infra/README.md.

Under load (infra/bench.sh holds 200 writes/s + 1,000 reads/s through it) what counts is
the shim's own CPU, one interpreter for every request: its HTTP servers keep a real
listen backlog, write each reply in one piece with Nagle off and read headers without
the email parser (`httpd`); request ids come from a counter; the table's stream is read
over the JSON protocol directly (`streams.JsonApi`), its records kept in the wire form
Lambda's event carries.

Usage: stack.py --table NAME --bin-dir target/debug [--port 0] [--social-port 0] ... (0: any free port)
Prints one line `READY api=http://... social=http://... events=http://... realtime=ws://... idp=http://... jwt_kid=...`
on stdout when it serves.
"""
import argparse
import os
import signal
import sys
import threading

import boto3
from botocore.config import Config as BotoConfig

import events
import iam
import idp
import sigv4
from base import ROOT, log
from gateway import Callers, ReplyCheck, gateway_handler, load_openapi, metric_roles, principal_policies
from httpd import Admitting, Server
from kafka_mapping import KafkaPoller
from lambda_host import FunctionHost
from provision import (ensure_buckets, ensure_buses, ensure_cache_group, ensure_kinesis_streams, ensure_queues,
                       ensure_table, ensure_topics, ensure_webhooks)
from queue_mapping import QueuePoller, TopicPoller
import console
import monitoring
from schedules import rate_seconds, run_schedule
from social import social_handler
from streams import JsonApi, KinesisStream, StreamPoller, TableStream
from template import logical_id, read_template


def main():
    ap = argparse.ArgumentParser(description="Local API Gateway, Lambda and stream mapping.")
    ap.add_argument("--template", default=os.path.join(ROOT, "template.yaml"))
    ap.add_argument("--bin-dir", default=os.path.join(ROOT, "target", "debug"))
    ap.add_argument("--table", required=True)
    # Every port is a free one unless given: a script that starts several stacks (the
    # benchmark, the tests, the fuzzer) never finds one taken by another. infra/up.sh
    # gives the fixed ports of the local contract (3000-3004).
    ap.add_argument("--port", type=int, default=int(os.environ.get("LB_PORT", 0)),
                    help="the API; 0 (the default): any free port")
    ap.add_argument("--social-port", type=int, default=0,
                    help="the social-graph stand-in; 0 (the default): any free port")
    ap.add_argument("--events-port", type=int, default=int(os.environ.get("LB_EVENTS_PORT", 0)),
                    help="the local events API's HTTP endpoint (publish, demo page); 0 (the default): any free port")
    ap.add_argument("--events-ws-port", type=int, default=int(os.environ.get("LB_EVENTS_WS_PORT", 0)),
                    help="the local events API's real-time (WebSocket) endpoint; 0 (the default): any free port")
    ap.add_argument("--jwt-key", default=os.environ.get("LB_JWT_KEY", idp.DEFAULT_KEY),
                    help="the local issuer's RSA key (PEM; made when absent): it signs players' tokens RS256, "
                         "and the gateway and the events API check them with its published half")
    ap.add_argument("--jwt-issuer", default=os.environ.get("LB_JWT_ISSUER", idp.DEFAULT_ISSUER),
                    help="the issuer (iss) players' tokens must name: the template's JwtIssuer")
    ap.add_argument("--jwt-audience", default=os.environ.get("LB_JWT_AUDIENCE", idp.DEFAULT_AUDIENCE),
                    help="the audience (aud) players' tokens must name: the template's JwtAudience")
    ap.add_argument("--dynamodb-url", default="http://127.0.0.1:8000")
    ap.add_argument("--redis-url", default="redis://127.0.0.1:6379")
    ap.add_argument("--key-prefix", default="")
    ap.add_argument("--api-key", default=os.environ.get("LB_API_KEY", "local-dev-key"),
                    help="the local shortcut on IAM routes (x-api-key), for curl and tests; never in AWS")
    ap.add_argument("--access-key", action="append", metavar="ID:SECRET:PRINCIPAL",
                    help="a SigV4 key pair the gateway accepts on IAM routes, and the principal whose policy "
                         "holds its calls (game-server, operator, support, admin); default: sigv4.LOCAL_KEYS")
    ap.add_argument("--region", default=os.environ.get("LB_REGION", "us-east-1"),
                    help="the region SigV4 signatures must be scoped to")
    ap.add_argument("--idp-port", type=int, default=int(os.environ.get("LB_IDP_PORT", 0)),
                    help="the local issuer's discovery document and JWKS; 0 (the default): any free port")
    ap.add_argument("--console-port", type=int, default=int(os.environ.get("LB_CONSOLE_PORT", 0)),
                    help="the operator console's static files (infra/console/dist); 0 (the default): any free port")
    ap.add_argument("--workers", type=int, default=int(os.environ.get("LB_WORKERS", 2)))
    ap.add_argument("--max-queue-wait", type=float, default=None,
                    help="seconds an API request may wait for a free process of its function before "
                         "a 503 `throttled` with Retry-After (Lambda's concurrency limit); default: "
                         "as long as the function's timeout")
    ap.add_argument("--max-connections", type=int, default=int(os.environ.get("LB_MAX_CONNECTIONS", 512)),
                    help="API connections served at once; one more gets a 503 `throttled` at once")
    ap.add_argument("--poll-interval", type=float, default=0.25, help="seconds; AWS polls 4 times a second")
    ap.add_argument("--no-stream", action="store_true", help="do not run the stream mapping")
    ap.add_argument("--kinesis", action="store_true", default=os.environ.get("LB_KINESIS") == "1",
                    help="create the template's Kinesis streams and play their mapping (polls moto)")
    ap.add_argument("--kafka-bootstrap", default=os.environ.get("LB_KAFKA"),
                    help="host:port of a Kafka broker to play the self-managed Kafka mappings against")
    ap.add_argument("--kafka-topics", default=os.environ.get("LB_KAFKA_TOPICS"),
                    help="comma-separated; stands for the template's KafkaTopics (one mapping each)")
    ap.add_argument("--run-dir", default=os.path.join(ROOT, ".local", "run"))
    ap.add_argument("--redis-timeout-ms", default=os.environ.get("REDIS_TIMEOUT_MS", "200"))
    ap.add_argument("--dynamodb-timeout-ms", default=os.environ.get("DYNAMODB_TIMEOUT_MS", "5000"),
                    help="every DynamoDB call's budget (production: 2000; moto on a loaded 2-core "
                         "machine answers slower)")
    ap.add_argument("--redis-retention-seconds", type=int, default=604800)
    ap.add_argument("--schedule-every", type=float, default=None, help="seconds; overrides every rate() schedule")
    ap.add_argument("--check-openapi", action="store_true",
                    help="validate every reply against openapi.yaml (the tests turn this on)")
    ap.add_argument("--cors-origins", default=os.environ.get("LB_CORS_ORIGINS", ""),
                    help="comma-separated origins of web games allowed to call the API from a browser "
                         "(the template's CorsOrigins); the console's is always allowed")
    ap.add_argument("--parameter", action="append", default=[], metavar="NAME=VALUE",
                    help="a template parameter's value (its default otherwise); so far the webhooks' "
                         "(docs/webhooks.md) are played")
    ap.add_argument("--cursor-secret", default=os.environ.get("CURSOR_SECRET", "local-cursor-secret-not-for-production"))
    args = ap.parse_args()
    os.makedirs(args.run_dir, exist_ok=True)

    topics = [x.strip() for x in args.kafka_topics.split(",") if x.strip()] if args.kafka_topics else None
    t = read_template(args.template, topics)
    tpl, functions, routes, streams, schedules = t.raw, t.functions, t.routes, t.streams, t.schedules
    aws_env = {
        "AWS_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "local",
        "AWS_SECRET_ACCESS_KEY": "local",
        "AWS_ENDPOINT_URL_DYNAMODB": args.dynamodb_url,
        "AWS_ENDPOINT_URL_DYNAMODB_STREAMS": args.dynamodb_url,
        "AWS_ENDPOINT_URL_SQS": args.dynamodb_url,
        "AWS_ENDPOINT_URL_EVENTBRIDGE": args.dynamodb_url,
        "AWS_ENDPOINT_URL_KINESIS": args.dynamodb_url,
        "AWS_ENDPOINT_URL_ELASTICACHE": args.dynamodb_url,
        "AWS_ENDPOINT_URL_SNS": args.dynamodb_url,
        "AWS_ENDPOINT_URL_S3": args.dynamodb_url,
    }
    boto_cfg = BotoConfig(retries={"max_attempts": 2}, connect_timeout=2, read_timeout=10)
    kw = {
        "endpoint_url": args.dynamodb_url,
        "region_name": "us-east-1",
        "aws_access_key_id": "local",
        "aws_secret_access_key": "local",
        "config": boto_cfg,
    }
    dynamodb = boto3.client("dynamodb", **kw)
    if ensure_table(dynamodb, tpl, args.table):
        log("created table", table=args.table)
    sqs = boto3.client("sqs", **kw)
    queues = ensure_queues(sqs, t.queues, args.table)
    buses = ensure_buses(boto3.client("events", **kw), t.buses, args.table)
    params = {k: str(v.get("Default", "")) for k, v in tpl.get("Parameters", {}).items()}
    params.update(p.split("=", 1) for p in args.parameter)
    hooked = ensure_webhooks(boto3.client("events", **kw), boto3.client("secretsmanager", **kw), tpl, args.table,
                             buses["LeaderboardEventBus"], queues, params)
    if hooked:
        log("webhooks on", events=hooked)
    sns = boto3.client("sns", **kw)
    topics = ensure_topics(sns, t.topics, args.table)
    cache_group = ensure_cache_group(boto3.client("elasticache", **kw), args.table)
    buckets = ensure_buckets(boto3.client("s3", **kw), t.buckets, args.table)
    kinesis = boto3.client("kinesis", **kw)
    streams_made = ensure_kinesis_streams(kinesis, t.kinesis_streams, args.table) if args.kinesis else {}

    social = Server(("127.0.0.1", args.social_port), social_handler())
    threading.Thread(target=social.serve_forever, daemon=True).start()
    social_url = f"http://127.0.0.1:{social.server_address[1]}"
    # The players' identity provider: the gateway checks their tokens on the JWT routes,
    # the events API on subscriptions.
    issuer = idp.Issuer(args.jwt_key, args.jwt_issuer, args.jwt_audience)
    idp_srv = Server(("127.0.0.1", args.idp_port), idp.serve_handler(issuer))
    threading.Thread(target=idp_srv.serve_forever, daemon=True).start()
    idp_url = f"http://127.0.0.1:{idp_srv.server_address[1]}"
    players = idp.Players(issuer, idp_url + idp.DISCOVERY)
    # The events API (AppSync Events in AWS), when a function publishes to it.
    events_url = events_ws = None
    demo_config = {}
    if any("LIVE_EVENTS_URL" in f["env"] for f in functions.values()):
        events_url, events_ws = events.start(args.events_port, args.events_ws_port, players, demo_config)

    # What every process gets, as the Lambda service sets AWS_* for every function;
    # REDIS_KEY_PREFIX is local only (it isolates tests sharing one redis-server).
    base_env = {
        "PATH": os.environ.get("PATH", ""),
        "RUST_LOG": os.environ.get("RUST_LOG", "info"),
        "RUST_BACKTRACE": "1",
        "REDIS_KEY_PREFIX": args.key_prefix,
        **aws_env,
    }
    if "TZ" in os.environ:  # lets a test prove that no zone leaks into window arithmetic
        base_env["TZ"] = os.environ["TZ"]
    # What the template's Parameters and !Ref values resolve to on this machine; each
    # function receives only the variables its template entry declares.
    declared = {
        "TABLE_NAME": args.table,
        "REDIS_URL": args.redis_url,
        "REDIS_TIMEOUT_MS": str(args.redis_timeout_ms),
        "DYNAMODB_TIMEOUT_MS": str(args.dynamodb_timeout_ms),
        "SOCIAL_GRAPH_URL": social_url,
        "RECEIPT_TTL_DAYS": "30",
        "REDIS_RETENTION_SECONDS": str(args.redis_retention_seconds),
        "MAX_FUTURE_SKEW_MS": "60000",
        "CURSOR_SECRET": args.cursor_secret,
        # Hot-spot protection and the write-through switch: the template's defaults,
        # overridable from the environment (tests and the benchmark set them).
        "READ_CACHE_TTL_MS": os.environ.get("READ_CACHE_TTL_MS", "250"),
        "READS_PER_PLAYER_PER_S": os.environ.get("READS_PER_PLAYER_PER_S", "20"),
        "READS_PER_IP_PER_S": os.environ.get("READS_PER_IP_PER_S", "200"),
        "WRITE_THROUGH": os.environ.get("WRITE_THROUGH", "true"),
        "SEAL_SETTLE_SECONDS": os.environ.get("SEAL_SETTLE_SECONDS", "60"),
        "CACHE_REPLICATION_GROUP_ID": cache_group,
    }
    if events_url:
        declared["LIVE_EVENTS_URL"] = f"{events_url}/event"
    if "RepairQueue" in queues:
        declared["REPAIR_QUEUE_URL"] = queues["RepairQueue"][0]
    if "StreamDeadLetterQueue" in queues:
        declared["DEAD_LETTER_QUEUE_URL"] = queues["StreamDeadLetterQueue"][0]
    if "ExportQueue" in queues and "ExportBucket" in buckets:
        declared["EXPORT_QUEUE_URL"] = queues["ExportQueue"][0]
        declared["EXPORT_BUCKET"] = buckets["ExportBucket"]
        # Exports' parts: the template's 5 MiB, or less (tests), which the local S3 takes.
        declared["EXPORT_PART_BYTES"] = os.environ.get("EXPORT_PART_BYTES", "5242880")
    if "LeaderboardEventBus" in buses:
        declared["EVENT_BUS_NAME"] = buses["LeaderboardEventBus"]
    hosts = {}
    for name, spec in functions.items():
        if not os.path.exists(os.path.join(args.bin_dir, spec["binary"])):
            sys.exit(f"missing binary for {name}: {args.bin_dir}/{spec['binary']} (build first)")
        fn_env = {**base_env, **{k: v for k, v in declared.items() if k in spec["env"]}}
        # Its own credentials, as Lambda hands each function its execution role's: the
        # DynamoDB endpoint holds every call to what the template's role allows.
        fn_env["AWS_ACCESS_KEY_ID"] = f"{iam.ACCESS_KEY_PREFIX}{name}"
        hosts[name] = FunctionHost(name, spec, args.bin_dir, fn_env, args.workers, args.run_dir)
        hosts[name].start()

    def destination_of(mapping):
        target = mapping.get("DestinationConfig", {}).get("OnFailure", {}).get("Destination")
        if target is None:
            return None
        return (lambda u, body: sqs.send_message(QueueUrl=u, MessageBody=body), queues[logical_id(target)][0])

    pollers = []
    if not args.no_stream:
        streams_api = JsonApi(args.dynamodb_url, "dynamodb", "DynamoDBStreams_20120810")
        table_stream = TableStream(dynamodb, streams_api, args.table)
        for mapping in streams:
            pollers.append(StreamPoller(hosts[mapping["function"]], mapping, table_stream,
                                        args.poll_interval, destination_of(mapping)))
    for mapping in t.kinesis:
        # The stream the mapping names (created, or the parameter's): here the one made.
        name = next(iter(streams_made.values()), None)
        if name is not None:
            pollers.append(StreamPoller(hosts[mapping["function"]], mapping, KinesisStream(kinesis, name),
                                        args.poll_interval, destination_of(mapping)))
    for mapping in t.kafka:
        if not args.kafka_bootstrap:
            log("no Kafka broker given (--kafka-bootstrap); the Kafka mappings are not played")
            break
        pollers.append(KafkaPoller(hosts[mapping["function"]], mapping, args.kafka_bootstrap,
                                   f"{args.table}-{mapping['function']}", args.poll_interval,
                                   destination_of(mapping)))
    for p in pollers:
        p.start()
    for mapping in t.queue_mappings:
        p = QueuePoller(hosts[mapping["function"]], mapping, sqs, queues[logical_id(mapping["Queue"])],
                        args.poll_interval)
        p.start()
        pollers.append(p)

    for mapping in t.topic_mappings:
        name = mapping["function"]
        # Once a second: notifications are rare, and every poll takes the endpoint's one
        # lock from the table's requests (at the tests' 0.1 s, fifty stacks' pollers
        # slowed the whole suite).
        p = TopicPoller(hosts[name], sqs, sns, topics[logical_id(mapping["Topic"])],
                        f"{args.table}-{name}-sns", max(args.poll_interval, 1.0))
        p.start()
        pollers.append(p)

    stopped = threading.Event()
    for mapping in schedules:
        every = args.schedule_every or rate_seconds(mapping.get("Schedule", ""))
        if every:
            threading.Thread(
                target=run_schedule, args=(hosts[mapping["function"]], mapping, every, stopped), daemon=True
            ).start()

    openapi = load_openapi()
    check = ReplyCheck(openapi) if args.check_openapi else None
    # The console is served before the API so the gateway knows its origin (CORS); it
    # learns the API's address from config.json once the API has one.
    console_config = {"mode": "local", "api_key": args.api_key, "topic_arn": next(iter(topics.values()), None)}
    metrics = monitoring.Metrics(args.run_dir)
    console_srv = Server(("127.0.0.1", args.console_port),
                         console.handler(console_config, metrics=metrics, metric_roles=metric_roles(tpl)))
    threading.Thread(target=console_srv.serve_forever, daemon=True).start()
    console_url = f"http://127.0.0.1:{console_srv.server_address[1]}"
    keys = sigv4.parse_keys(args.access_key) if args.access_key else dict(sigv4.LOCAL_KEYS)
    callers = Callers(args.api_key, players, keys, args.region, principal_policies(tpl))
    gateway = gateway_handler(routes, hosts, callers, openapi, check, args.max_queue_wait,
                              origins={console_url, console_url.replace("127.0.0.1", "localhost"),
                                       *filter(None, args.cors_origins.split(","))})
    api = Admitting(("127.0.0.1", args.port), gateway, args.max_connections)
    api_url = f"http://127.0.0.1:{api.server_address[1]}"
    demo_config["api"] = api_url
    console_config["api"] = api_url

    def shutdown(*_):
        stopped.set()
        for p in pollers:
            p.stopped.set()
        for h in hosts.values():
            h.stop()
        os._exit(0)

    signal.signal(signal.SIGTERM, shutdown)
    signal.signal(signal.SIGINT, shutdown)
    log("serving", api=api_url, social=social_url, idp=idp_url, events=events_url, events_realtime=events_ws, console=console_url,
        routes=[r.key for r in routes], functions=sorted(hosts), table=args.table)
    print(f"READY api={api_url} social={social_url} events={events_url} realtime={events_ws} console={console_url} "
          f"idp={idp_url} jwt_kid={issuer.kid}",
          flush=True)
    api.serve_forever()


if __name__ == "__main__":
    main()
