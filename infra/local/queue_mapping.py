"""The SQS event source mapping (the repair function's): short polls, batches handed over
as SQS events, `batchItemFailures` left in the queue.
"""
import json
import threading

from base import log


class QueuePoller:
    """Plays an SQS event source mapping: short polls (moto serves every request under
    one lock, so a long poll would stall DynamoDB), each batch handed to the function on a
    thread of its own (Lambda runs queue batches concurrently), `batchItemFailures` left in
    the queue for its visibility timeout, the rest deleted."""

    def __init__(self, host, mapping, sqs, queue, interval):
        self.host = host
        self.sqs = sqs
        self.url, self.arn = queue
        self.batch_size = min(int(mapping.get("BatchSize", 10)), 10)
        self.report_failures = "ReportBatchItemFailures" in mapping.get("FunctionResponseTypes", [])
        self.interval = interval
        self.stopped = threading.Event()
        self.slots = threading.Semaphore(max(1, host.workers))

    def start(self):
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        while not self.stopped.is_set():
            try:
                got = self.sqs.receive_message(QueueUrl=self.url, MaxNumberOfMessages=self.batch_size,
                                               WaitTimeSeconds=0, AttributeNames=["All"],
                                               MessageAttributeNames=["All"]).get("Messages", [])
            except Exception as e:  # the endpoint may be restarting: keep trying
                log("queue poll failed", error=repr(e))
                got = []
            if not got:
                self.stopped.wait(self.interval)
                continue
            self.slots.acquire()
            threading.Thread(target=self._deliver, args=(got,), daemon=True).start()

    def event(self, messages):
        """The function's event for a batch of the queue's messages."""
        return {"Records": [{
            "messageId": m["MessageId"], "receiptHandle": m["ReceiptHandle"], "body": m["Body"],
            "attributes": m.get("Attributes", {}), "messageAttributes": {},
            "md5OfBody": m.get("MD5OfBody"), "eventSource": "aws:sqs",
            "eventSourceARN": self.arn, "awsRegion": "us-east-1"} for m in messages]}

    def _deliver(self, messages):
        try:
            event = self.event(messages)
            log("queue batch handed over", function=self.host.name, messages=len(messages))
            result, error = self.host.invoke(event)
            if error is not None:
                log("queue batch failed; its messages return after the visibility timeout",
                    function=self.host.name, error=error)
                return
            failed = set()
            if self.report_failures:
                try:
                    failed = {f.get("itemIdentifier") for f in json.loads(result).get("batchItemFailures") or []}
                except (ValueError, AttributeError):
                    log("queue batch answered something unreadable; keeping it", function=self.host.name)
                    return
            done = [m for m in messages if m["MessageId"] not in failed]
            log("queue batch done", function=self.host.name, done=len(done), kept=len(messages) - len(done))
            if done:
                self.sqs.delete_message_batch(QueueUrl=self.url, Entries=[
                    {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(done)])
        except Exception as e:
            log("queue delivery failed", function=self.host.name, error=repr(e))
        finally:
            self.slots.release()


class TopicPoller(QueuePoller):
    """Plays an SNS subscription of a function: the topic delivers into a queue of its
    own (moto's SNS fans out to SQS as AWS's does), and each notification is handed to
    the function alone, as SNS's event (`EventSource` `aws:sns`, the envelope under `Sns`).
    A failed invocation leaves the notification in the queue, to come back after the
    visibility timeout: the stand-in for SNS's retries of an asynchronous invocation."""

    def __init__(self, host, sqs, sns, topic_arn, queue_name, interval):
        url = sqs.create_queue(QueueName=queue_name, Attributes={"VisibilityTimeout": "30"})["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        self.subscription = sns.subscribe(TopicArn=topic_arn, Protocol="sqs", Endpoint=arn)["SubscriptionArn"]
        super().__init__(host, {"BatchSize": 1}, sqs, (url, arn), interval)

    def event(self, messages):
        records = []
        for m in messages:
            envelope = json.loads(m["Body"])
            envelope.setdefault("MessageAttributes", {})
            records.append({"EventSource": "aws:sns", "EventVersion": "1.0",
                            "EventSubscriptionArn": self.subscription, "Sns": envelope})
        return {"Records": records}
