"""The self-managed Kafka event source mapping, over a real Kafka-protocol broker.
"""
import base64
import json
import threading
import time

from base import log
from streams import failure_record


class KafkaPoller:
    """Plays a self-managed Kafka event source mapping (provisioned mode) over a broker on
    loopback: one consumer of the mapping's topic committing to its consumer group, batches handed
    over as Lambda's Kafka event (`records` by `{topic}-{partition}`), a reported failure
    (`{partition, offset}`) delivered again from that offset of that partition while the
    records before it are committed, a failed invocation delivering the whole batch again
    (`MaximumRetryAttempts`, then the on-failure destination). Offsets are committed only
    for records done, so a restart delivers the rest again."""

    def __init__(self, host, mapping, bootstrap, group, interval, destination):
        self.host = host
        (self.topic,) = mapping["Topics"]
        self.bootstrap, self.group = bootstrap, group
        self.batch_size = int(mapping.get("BatchSize", 100))
        self.report_failures = "ReportBatchItemFailures" in mapping.get("FunctionResponseTypes", [])
        self.max_retries = int(mapping.get("MaximumRetryAttempts", -1))
        self.interval = interval
        self.destination = destination
        self.stopped = threading.Event()
        self.stats = {"batches": 0, "records": 0, "retries": 0, "discarded": 0}

    def start(self):
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        from kafka import KafkaConsumer, TopicPartition

        consumer, assigned, checked = None, set(), 0.0
        while not self.stopped.is_set():
            try:
                if consumer is None:
                    consumer = KafkaConsumer(
                        bootstrap_servers=self.bootstrap, group_id=self.group,
                        enable_auto_commit=False, auto_offset_reset="earliest")
                    assigned, checked = set(), 0.0
                if time.monotonic() - checked > 2:
                    # The topic's partitions, assigned to this one consumer (the mapping
                    # is its group's only member; no group rebalance to wait for), from
                    # the group's committed offsets; new partitions join as they appear.
                    checked = time.monotonic()
                    parts = {TopicPartition(self.topic, p)
                             for p in consumer.partitions_for_topic(self.topic) or ()}
                    if parts != assigned:
                        consumer.assign(sorted(parts))
                        assigned = parts
                if not assigned:
                    self.stopped.wait(self.interval)
                    continue
                polled = consumer.poll(timeout_ms=int(self.interval * 1000), max_records=self.batch_size)
                if polled:
                    self._deliver(consumer, {tp: list(rs) for tp, rs in polled.items() if rs})
            except Exception as e:  # the broker may be restarting: start over
                log("kafka poll failed", topic=self.topic, error=repr(e))
                if consumer is not None:
                    try:
                        consumer.close(autocommit=False)
                    except Exception:  # noqa: S110 - closing a broken consumer
                        pass
                consumer = None
                self.stopped.wait(1)

    def event(self, batch):
        def one(r):
            return {
                "topic": r.topic, "partition": r.partition, "offset": r.offset,
                "timestamp": r.timestamp, "timestampType": "CREATE_TIME",
                "key": base64.b64encode(r.key).decode() if r.key is not None else None,
                "value": base64.b64encode(r.value).decode() if r.value is not None else None,
                "headers": [{k: [b - 256 if b > 127 else b for b in (v or b"")]} for k, v in (r.headers or [])],
            }
        return {
            "eventSource": "SelfManagedKafka",
            "bootstrapServers": self.bootstrap,
            "records": {f"{tp.topic}-{tp.partition}": [one(r) for r in rs] for tp, rs in batch.items()},
        }

    def _failures(self, result):
        """Partition key -> offset to deliver again from; None when the whole batch failed."""
        if not self.report_failures:
            return {}
        try:
            failures = json.loads(result).get("batchItemFailures") or []
            out = {}
            for f in failures:
                ident = f["itemIdentifier"]
                key, offset = ident["partition"], int(ident["offset"])
                out[key] = min(out.get(key, offset), offset)
            return out
        except (ValueError, AttributeError, KeyError, TypeError):
            log("kafka batch answered something unreadable; delivering it again", topic=self.topic)
            return None

    def _deliver(self, consumer, batch):
        from kafka.structs import OffsetAndMetadata

        attempts = 0
        while batch and not self.stopped.is_set():
            result, error = self.host.invoke(self.event(batch))
            self.stats["batches"] += 1
            failures = self._failures(result) if error is None else None
            if failures is None:
                attempts += 1
                self.stats["retries"] += 1
                if 0 <= self.max_retries < attempts:
                    self._discard(consumer, batch, error or result, attempts)
                    return
                self.stopped.wait(min(0.05 * 2**attempts, 2))
                continue
            commits, rest = {}, {}
            for tp, rs in batch.items():
                failed_at = failures.get(f"{tp.topic}-{tp.partition}")
                done = [r for r in rs if failed_at is None or r.offset < failed_at]
                keep = [r for r in rs if failed_at is not None and r.offset >= failed_at]
                if done:
                    commits[tp] = OffsetAndMetadata(done[-1].offset + 1, "", -1)
                    self.stats["records"] += len(done)
                if keep:
                    rest[tp] = keep
            if commits:
                consumer.commit(commits)
            if rest:
                attempts += 1
                self.stats["retries"] += 1
                self.stopped.wait(min(0.05 * 2**attempts, 2))
            batch = rest

    def _discard(self, consumer, batch, why, attempts):
        from kafka.structs import OffsetAndMetadata

        count = sum(len(rs) for rs in batch.values())
        self.stats["discarded"] += count
        consumer.commit({tp: OffsetAndMetadata(rs[-1].offset + 1, "", -1) for tp, rs in batch.items()})
        record = failure_record(self.host.name, why, attempts, "KafkaBatchInfo", {
            "batchSize": count,
            "bootstrapServers": self.bootstrap,
            "payloadSize": 0,
            "recordsInfo": {f"{tp.topic}-{tp.partition}": {
                "firstRecordOffset": str(rs[0].offset), "lastRecordOffset": str(rs[-1].offset)}
                for tp, rs in batch.items()},
        })
        if self.destination is None:
            log("kafka batch given up on, with no on-failure destination", record=record)
            return
        send, url = self.destination
        send(url, json.dumps(record))
