"""The events the metrics count as they happen (the rest is read at scrape time by
:mod:`patience.server.metrics`): each is a ``prometheus_client`` instrument in no registry, put in the
process's registry by :func:`patience.server.metrics.registry_for`. Observing one costs a lock and
an addition; nothing is served unless ``patience serve --metrics-port`` is given.
"""

from __future__ import annotations

from prometheus_client import Counter, Histogram

__all__ = ["ALL", "BUS_SECONDS", "COMMIT_BATCH", "COMMIT_SECONDS", "ERRORS", "INTENT_SECONDS", "REFUSED",
           "WAVE_SECONDS", "WAVE_SEEKERS"]

_FAST = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)

INTENT_SECONDS = Histogram("patience_intent_seconds", "from an intent's arrival on a socket to its answer queued",
                           ["kind"], buckets=_FAST, registry=None)
COMMIT_SECONDS = Histogram("patience_group_commit_seconds", "time of one group commit (a batch of writes)",
                           buckets=_FAST, registry=None)
COMMIT_BATCH = Histogram("patience_group_commit_batch", "jobs in one group commit",
                         buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024), registry=None)
WAVE_SECONDS = Histogram("patience_pairing_wave_seconds", "time of one pairing wave (this process as the pairer)",
                         buckets=_FAST, registry=None)
WAVE_SEEKERS = Histogram("patience_pairing_wave_seekers", "seekers waiting in all pools at a pairing wave",
                         buckets=(0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024), registry=None)
BUS_SECONDS = Histogram("patience_bus_round_trip_seconds", "a timed round trip to the bus (at each scrape)",
                        buckets=_FAST, registry=None)
REFUSED = Counter("patience_refused_messages", "error answers sent to pages, by reason (the code)", ["reason"],
                  registry=None)
ERRORS = Counter("patience_errors", "log lines at level error or worse, by logger and exception type",
                 ["logger", "kind"], registry=None)

ALL = (INTENT_SECONDS, COMMIT_SECONDS, COMMIT_BATCH, WAVE_SECONDS, WAVE_SEEKERS, BUS_SECONDS, REFUSED, ERRORS)
