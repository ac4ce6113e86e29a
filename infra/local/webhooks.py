"""The local stand-in for EventBridge API destinations: what the template's webhooks
(docs/webhooks.md) do in AWS, done by the local endpoint's event bus.

moto keeps connections, API destinations and rules, but sends an API destination
nothing useful (no body, no auth header, no retry). So a rule's API-destination
targets are handed to one delivery thread here instead, which does what EventBridge
documents:
- the request: the destination's method to its endpoint, the whole event (the
  envelope: `version`, `id`, `detail-type`, `source`, `time`, `resources`, `detail`) as
  its JSON body, and the connection's header, read from the secret the connection keeps
  in Secrets Manager (moto's, as AWS keeps one);
- its answer: 2xx delivers; 401, 407, 409, 429, 5xx, a timeout (5 s) or no connection
  is tried again, with backoff, until the target's RetryPolicy runs out
  (`MaximumRetryAttempts`, `MaximumEventAgeInSeconds`); any other answer is not retried;
- what was not delivered goes to the target's DeadLetterConfig queue, with
  `RULE_ARN`, `TARGET_ARN`, `ERROR_CODE` and `ERROR_MESSAGE` attributes;
- each destination is sent at most `InvocationRateLimitPerSecond` requests a second.
The backoff is AWS's shape on a shorter clock: 0.2 s doubling to at most 5 s between
tries (AWS spreads retries over up to 24 hours).
"""

import datetime
import heapq
import sys
import itertools
import json
import threading
import time
import urllib.error
import urllib.request

RETRIED = {401, 407, 409, 429}
TIMEOUT_S = 5.0
FIRST_BACKOFF_S = 0.2
MOST_BACKOFF_S = 5.0


class Job:
    """One event on its way to one API destination."""

    def __init__(self, rule_arn, target, destination, header, event):
        retry = target.get("RetryPolicy") or {}
        self.rule_arn = rule_arn
        self.target_arn = target["Arn"]
        self.dead_letter = (target.get("DeadLetterConfig") or {}).get("Arn")
        self.max_retries = int(retry.get("MaximumRetryAttempts", 185))
        self.max_age_s = int(retry.get("MaximumEventAgeInSeconds", 86400))
        self.url = destination.invocation_endpoint
        self.method = destination.http_method or "POST"
        self.rate = float(destination.invocation_rate_limit_per_second or 300)
        self.header = header
        self.body = json.dumps(event).encode()
        self.born = time.monotonic()
        self.retries = 0


class Deliveries:
    """The delivery thread: jobs by when they are due, each destination's rate kept."""

    def __init__(self, send_dead_letter):
        self.send_dead_letter = send_dead_letter
        self.due = []
        self.seq = itertools.count()
        self.next_slot = {}
        self.cv = threading.Condition()
        threading.Thread(target=self.run, daemon=True, name="webhooks").start()

    def submit(self, job, at=None):
        with self.cv:
            heapq.heappush(self.due, (at or time.monotonic(), next(self.seq), job))
            self.cv.notify()

    def run(self):
        while True:
            with self.cv:
                while not self.due or self.due[0][0] > time.monotonic():
                    self.cv.wait(None if not self.due else max(0.0, self.due[0][0] - time.monotonic()))
                _, _, job = heapq.heappop(self.due)
            slot = self.next_slot.get(job.target_arn, 0.0)
            now = time.monotonic()
            if slot > now:
                # Over the destination's rate: wait for its next slot.
                self.submit(job, slot)
                continue
            self.next_slot[job.target_arn] = max(now, slot) + 1.0 / job.rate
            self.attempt(job)

    def attempt(self, job):
        status, why = send(job)
        if status is not None and 200 <= status < 300:
            return
        log("webhook request failed", url=job.url, status=status, why=why, retries=job.retries)
        retried = status is None or status >= 500 or status in RETRIED
        age = time.monotonic() - job.born
        if retried and job.retries < job.max_retries and age < job.max_age_s:
            backoff = min(FIRST_BACKOFF_S * 2 ** job.retries, MOST_BACKOFF_S)
            job.retries += 1
            self.submit(job, time.monotonic() + backoff)
            return
        code = "RETRIES_EXHAUSTED" if retried else "NOT_RETRIED"
        if job.dead_letter:
            self.send_dead_letter(job, code, why)


def log(msg, **fields):
    print(json.dumps({"ts": datetime.datetime.now(datetime.timezone.utc).isoformat(), "msg": msg, **fields}),
          file=sys.stderr, flush=True)


def send(job):
    """One try: the status (None when there was no answer) and what went wrong."""
    headers = {"Content-Type": "application/json; charset=utf-8", "User-Agent": "Amazon/EventBridge/ApiDestinations"}
    headers.update(job.header)
    req = urllib.request.Request(job.url, data=job.body, method=job.method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT_S) as resp:
            return resp.status, ""
    except urllib.error.HTTPError as e:
        return e.code, f"the endpoint answered {e.code}"
    except (urllib.error.URLError, OSError) as e:
        return None, f"no answer: {e}"


def connection_header(backend, secrets, connection_arn):
    """The header a connection adds, read from the secret it keeps (API key or basic)."""
    connection = next((c for c in backend.connections.values() if c.arn == connection_arn), None)
    if connection is None:
        return {}
    kept = json.loads(secrets.get_secret_value(connection.secret_arn, None, None)["SecretString"])
    if "api_key_name" in kept:
        return {kept["api_key_name"]: kept.get("api_key_value", "")}
    if "username" in kept:
        import base64
        token = base64.b64encode(f"{kept['username']}:{kept.get('password', '')}".encode()).decode()
        return {"Authorization": f"Basic {token}"}
    return {}


def envelope(event):
    """The event as an API destination receives it (its time in RFC 3339)."""
    out = {k: v for k, v in event.items() if k != "ingestion-time"}
    if isinstance(out.get("time"), (int, float)):
        out["time"] = datetime.datetime.fromtimestamp(out["time"], datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return out


def install(port):
    """Routes moto's rules' API-destination targets to the delivery thread; the dead
    letters go to the target's queue through this endpoint's own SQS API."""
    import boto3
    from moto.events import models as events_models
    from moto.secretsmanager.models import secretsmanager_backends

    def send_dead_letter(job, code, why):
        sqs = boto3.client("sqs", endpoint_url=f"http://127.0.0.1:{port}", region_name="us-east-1",
                           aws_access_key_id="local-webhooks", aws_secret_access_key="local")
        account, name = job.dead_letter.split(":")[4], job.dead_letter.split(":")[5]
        url = sqs.get_queue_url(QueueName=name, QueueOwnerAWSAccountId=account)["QueueUrl"]
        attrs = {k: {"DataType": "String", "StringValue": v or "-"} for k, v in
                 (("RULE_ARN", job.rule_arn), ("TARGET_ARN", job.target_arn), ("ERROR_CODE", code),
                  ("ERROR_MESSAGE", why))}
        sqs.send_message(QueueUrl=url, MessageBody=job.body.decode(), MessageAttributes=attrs)

    deliveries = Deliveries(send_dead_letter)
    original = events_models.Rule.send_to_targets

    def send_to_targets(self, original_event, transform_input=True):
        apis = [t for t in self.targets if ":api-destination/" in t["Arn"]]
        if not apis:
            return original(self, original_event, transform_input)
        others = [t for t in self.targets if t not in apis]
        kept, self.targets = self.targets, others
        try:
            original(self, original_event, transform_input)
        finally:
            self.targets = kept
        if not self.event_pattern.matches_event(original_event):
            return None
        backend = events_models.events_backends[self.account_id][self.region_name]
        secrets = secretsmanager_backends[self.account_id][self.region_name]
        for target in apis:
            name = target["Arn"].split(":api-destination/")[1].split("/")[0]
            destination = backend.destinations.get(name)
            if destination is None:
                log("webhook target names no API destination", target=target["Arn"])
                continue
            header = connection_header(backend, secrets, destination.connection_arn)
            deliveries.submit(Job(self.arn, target, destination, header, envelope(original_event)))
        return None

    events_models.Rule.send_to_targets = send_to_targets
