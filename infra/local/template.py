"""What the local stack reads from template.yaml: functions, routes, event source mappings,
schedules, queues, event buses, Kinesis streams and SNS topics (CloudFormation's short tags read as
data).
"""
import re

import yaml

import template_stats


class _CfnLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """YAML loader that keeps CloudFormation short tags (!Ref, !GetAtt, ...) as dicts;
    on libyaml when PyYAML has it (the pure-Python parser took a fifth of a stack's
    start)."""


def _cfn_tag(loader, suffix, node):
    if isinstance(node, yaml.ScalarNode):
        value = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)
    return {suffix: value}


_CfnLoader.add_multi_constructor("!", _cfn_tag)


def load_template(path):
    with open(path, encoding="utf-8") as f:
        return yaml.load(f, Loader=_CfnLoader)  # noqa: S506 - SafeLoader subclass


class Route:
    def __init__(self, function, method, path, iam):
        self.function = function
        self.method = method.upper()
        self.path = path
        self.key = f"{self.method} {path}"
        self.iam = iam
        self.params = re.findall(r"{([^}/]+)}", path)
        self.regex = re.compile("^" + re.sub(r"{[^}/]+}", "([^/]+)", path) + "$")


def read_template(path, kafka_topics=None):
    """Functions (name -> props), HTTP routes, stream mappings, queues, buses, topics and
    buckets from the template.
    `kafka_topics` stands for the KafkaTopics parameter (one Kafka mapping per topic)."""
    values = {"KafkaTopics": list(kafka_topics)} if kafka_topics else None
    tpl = template_stats.expand_for_each(load_template(path), values)
    globals_fn = tpl.get("Globals", {}).get("Function", {})
    defaults = {k: v.get("Default") for k, v in tpl.get("Parameters", {}).items()}
    queues, queue_mappings, buses, topics, topic_mappings = {}, [], [], [], []
    buckets = []

    def resolved(props):
        # A `!Ref Parameter` becomes the parameter's default, as an undeployed stack has it.
        return {k: defaults.get(v["Ref"], v) if isinstance(v, dict) and set(v) == {"Ref"} else v
                for k, v in props.items()}

    functions, routes, streams, schedules = {}, [], [], []
    kinesis, kafka, kinesis_streams = [], [], []
    for name, res in tpl.get("Resources", {}).items():
        if res.get("Type") == "AWS::SQS::Queue":
            queues[name] = res.get("Properties", {})
        if res.get("Type") == "AWS::Kinesis::Stream":
            kinesis_streams.append(name)
        if res.get("Type") == "AWS::Lambda::EventSourceMapping":
            p = {"function": logical_id(res["Properties"]["FunctionName"]), "name": name,
                 **resolved(res["Properties"])}
            if "SelfManagedEventSource" in p:
                kafka.append(p)  # the local broker plays the self-managed cluster
            elif "Topics" not in p:
                kinesis.append(p)  # MSK's (same topics) is not played locally
        if res.get("Type") == "AWS::Events::EventBus":
            buses.append(name)
        if res.get("Type") == "AWS::SNS::Topic":
            topics.append(name)
        if res.get("Type") == "AWS::S3::Bucket" and "Condition" not in res:
            buckets.append(name)  # the console's (conditional) is served by console.py
        if res.get("Type") != "AWS::Serverless::Function":
            continue
        props = {**globals_fn, **res.get("Properties", {})}
        # SAM merges the Globals' environment variables with the function's own.
        props["Environment"] = {"Variables": {
            **globals_fn.get("Environment", {}).get("Variables", {}),
            **res.get("Properties", {}).get("Environment", {}).get("Variables", {}),
        }}
        binary = res.get("Metadata", {}).get("BuildProperties", {}).get("Binary", name)
        functions[name] = {
            "binary": binary,
            "timeout": int(props.get("Timeout", 3)),
            "memory": int(props.get("MemorySize", 128)),
            "env": sorted(props.get("Environment", {}).get("Variables", {}).keys()),
        }
        for ev in props.get("Events", {}).values():
            p = ev.get("Properties", {})
            if ev.get("Type") == "HttpApi":
                iam = p.get("Auth", {}).get("Authorizer") == "AWS_IAM"
                routes.append(Route(name, p["Method"], p["Path"], iam))
            elif ev.get("Type") == "DynamoDB":
                streams.append({"function": name, **resolved(p)})
            elif ev.get("Type") == "Schedule":
                schedules.append({"function": name, **p})
            elif ev.get("Type") == "SQS":
                queue_mappings.append({"function": name, **resolved(p)})
            elif ev.get("Type") == "SNS":
                topic_mappings.append({"function": name, **resolved(p)})
    # Most specific first: literal segments beat parameters (as API Gateway matches).
    routes.sort(key=lambda r: (-r.path.count("/"), r.path.count("{")))
    t = Template(tpl, functions, routes, streams, schedules, queues, queue_mappings, buses)
    t.kinesis, t.kafka, t.kinesis_streams = kinesis, kafka, kinesis_streams
    t.topics, t.topic_mappings = topics, topic_mappings
    t.buckets = buckets
    return t


class Template:
    """What the local stack reads from template.yaml."""

    def __init__(self, raw, functions, routes, streams, schedules, queues, queue_mappings, buses=()):
        self.raw, self.functions, self.routes = raw, functions, routes
        self.streams, self.schedules = streams, schedules
        self.queues, self.queue_mappings = queues, queue_mappings
        self.buses = list(buses)


def logical_id(ref):
    """The resource a `!GetAtt X.Arn` / `!Ref X` names."""
    if isinstance(ref, dict):
        ref = ref.get("GetAtt") or ref.get("Ref") or ""
        if isinstance(ref, list):
            ref = ref[0]
    return str(ref).split(".", 1)[0]
