"""WatchWorkloads with resumption: the bookkeeping behind Client.watch."""

from __future__ import annotations

import dataclasses
import enum
import logging
import random
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import grpc

from workloadmap.v1 import service_pb2, workload_pb2

_log = logging.getLogger("workloadmap")

RESUME_TRAILER = "wm-resume-revision"

# Codes after which the same watch goes on: the daemon cut a client that fell
# behind (RESOURCE_EXHAUSTED), the connection or the daemon went away
# (UNAVAILABLE), or the daemon cancelled the stream as it shut down
# (CANCELLED that the caller did not ask for).
_RETRYABLE = frozenset(
    {grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED}
)


class WatchEventType(enum.IntEnum):
    """The type of a WatchEvent: the daemon's four, and RESET."""

    ADDED = service_pb2.WorkloadEvent.ADDED
    MODIFIED = service_pb2.WorkloadEvent.MODIFIED
    DELETED = service_pb2.WorkloadEvent.DELETED
    #: The snapshot (or a resume's backlog) is complete: what was received so
    #: far is the state at `revision`.
    SYNCED = service_pb2.WorkloadEvent.SYNCED
    #: Client-side: the watch could not continue where it was (the daemon
    #: restarted, or the watch was away longer than the daemon's history), or
    #: a snapshot broke off before its SYNCED. Forget every workload received
    #: so far: a fresh snapshot (ADDED events, then SYNCED) follows.
    RESET = 100


@dataclasses.dataclass(frozen=True)
class WatchEvent:
    """One event of Client.watch.

    Attributes:
        type: ADDED, MODIFIED, DELETED, SYNCED or RESET.
        revision: the daemon revision of the event (for SYNCED, the revision
            the snapshot is complete at; 0 for RESET).
        workload: the resolved workload (for DELETED its last state); None
            for SYNCED and RESET.
    """

    type: WatchEventType
    revision: int
    workload: workload_pb2.ResolvedWorkload | None


@dataclasses.dataclass(frozen=True)
class Backoff:
    """Delays between reconnection attempts: exponential, with jitter.

    After n consecutive failed attempts the next waits a random time between
    half and all of min(initial * 2**(n-1), maximum) seconds; an attempt that
    delivered an event resets n. A stream that ends after delivering events
    is reopened at once.
    """

    initial: float = 0.2
    maximum: float = 30.0

    def delay(self, failures: int, rng: random.Random) -> float:
        """The wait before the next attempt, after `failures` (>= 1) in a row."""
        ceiling = min(self.initial * 2 ** min(failures - 1, 32), self.maximum)
        return ceiling * (0.5 + rng.random() / 2)


class Watch(Iterator[WatchEvent]):
    """An iterator over a WatchWorkloads stream that survives disconnects.

    Made by Client.watch. It reconnects after RESOURCE_EXHAUSTED,
    UNAVAILABLE, a CANCELLED it did not ask for, or a stream that ended,
    resuming after the last revision it yielded, so no event is lost or
    repeated. When resuming is impossible (OUT_OF_RANGE: the daemon restarted
    or its history no longer reaches back), it yields RESET and starts over
    with a fresh snapshot; so does a snapshot that broke off before SYNCED.

    Iteration blocks until the next event. cancel() (from any thread) ends it;
    so does leaving a `with` block. Errors that retrying cannot mend (a bad
    label selector: INVALID_ARGUMENT; an unknown cluster: NOT_FOUND; ...) are
    raised as grpc.RpcError, as is the last error after `max_retries`
    consecutive failed attempts.
    """

    def __init__(
        self,
        call: Callable[[service_pb2.WatchWorkloadsRequest], Any],
        request: service_pb2.WatchWorkloadsRequest,
        *,
        backoff: Backoff | None = None,
        max_retries: int | None = None,
        restart_on_out_of_range: bool = True,
        rng: random.Random | None = None,
    ) -> None:
        """Starts nothing yet: the first next() opens the stream.

        Args:
            call: opens one stream (the stub's WatchWorkloads with metadata
                bound); returns a gRPC response iterator.
            request: the filters; its resume_revision, if set, is where the
                first stream starts.
            backoff: delays between reconnections (None: Backoff()).
            max_retries: consecutive failed attempts before the last error is
                raised; None retries forever.
            restart_on_out_of_range: on OUT_OF_RANGE yield RESET and start
                over; False raises the error instead.
            rng: jitter source (tests make it deterministic).
        """
        self._open = call
        self._request = service_pb2.WatchWorkloadsRequest()
        self._request.CopyFrom(request)
        self._backoff = backoff or Backoff()
        self._max_retries = max_retries
        self._restart_on_out_of_range = restart_on_out_of_range
        self._rng = rng or random.Random()

        self._resume = request.resume_revision
        self._stream: Any = None
        # Whether the current stream started from a revision (its events all
        # carry resumable revisions) or with a snapshot (only from SYNCED on).
        self._stream_resumes = False
        self._stream_synced = False
        self._stream_delivered = False
        # Events of an unfinished snapshot reached the caller: a new snapshot
        # must be preceded by RESET.
        self._partial_snapshot = False
        self._failures = 0
        self._lock = threading.Lock()
        self._cancelled = threading.Event()

    @property
    def resume_revision(self) -> int:
        """The revision a new watch would resume after (0: none yet).

        Pass it as resume_revision to Client.watch to continue this watch
        later without a new snapshot.
        """
        return self._resume

    def cancel(self) -> None:
        """Ends the watch: the blocked or next next() raises StopIteration."""
        self._cancelled.set()
        with self._lock:
            if self._stream is not None:
                self._stream.cancel()

    def __enter__(self) -> Watch:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.cancel()

    def __iter__(self) -> Watch:
        return self

    def __next__(self) -> WatchEvent:
        while True:
            if self._cancelled.is_set():
                self._close()
                raise StopIteration
            if self._stream is None:
                self._connect()
            try:
                message = next(self._stream)
            except StopIteration:
                self._after_stream_end(None)
            except grpc.RpcError as error:
                reset = self._after_stream_end(error)
                if reset is not None:
                    return reset
            else:
                event = self._on_message(message)
                if event is not None:
                    return event

    def _connect(self) -> None:
        request = service_pb2.WatchWorkloadsRequest()
        request.CopyFrom(self._request)
        request.resume_revision = self._resume
        stream = self._open(request)
        with self._lock:
            self._stream = stream
        if self._cancelled.is_set():  # cancel() ran before the stream was set
            stream.cancel()
        self._stream_resumes = self._resume != 0
        self._stream_synced = False
        self._stream_delivered = False

    def _close(self) -> None:
        with self._lock:
            if self._stream is not None:
                self._stream.cancel()
            self._stream = None

    def _on_message(self, message: service_pb2.WorkloadEvent) -> WatchEvent | None:
        try:
            kind = WatchEventType(message.type)
        except ValueError:
            # A type this client does not know (a newer daemon): skipped,
            # and not a resume point.
            _log.debug("watch: skipping an event of unknown type %d", message.type)
            return None
        if kind == WatchEventType.RESET:
            return None  # never sent by the daemon
        self._stream_delivered = True
        self._failures = 0
        if kind == WatchEventType.SYNCED:
            self._stream_synced = True
            self._partial_snapshot = False
            self._resume = message.revision
        elif self._stream_synced or self._stream_resumes:
            self._resume = message.revision
        else:
            self._partial_snapshot = True
        workload = message.workload if message.HasField("workload") else None
        return WatchEvent(type=kind, revision=message.revision, workload=workload)

    def _after_stream_end(self, error: grpc.RpcError | None) -> WatchEvent | None:
        """Prepares the next stream; returns a RESET to yield, if any."""
        with self._lock:
            self._stream = None
        if self._cancelled.is_set():
            return None
        if error is not None:
            code = error.code()
            if code == grpc.StatusCode.OUT_OF_RANGE and self._restart_on_out_of_range:
                _log.info("watch: %s; starting over", error.details())
                self._resume = 0
                self._partial_snapshot = False
                return WatchEvent(type=WatchEventType.RESET, revision=0, workload=None)
            if code not in _RETRYABLE:
                raise error
            # The daemon's trailer names the last event it wrote. The last
            # event received is never later and is the safe resume point (an
            # event written but lost in transit is fetched again), so the
            # trailer only serves as a check.
            trailer = _resume_trailer(error)
            if trailer and trailer != self._resume and self._stream_synced:
                _log.warning(
                    "watch: daemon wrote up to %d, received up to %d", trailer, self._resume
                )
            why = f"{code.name}: {error.details()}"
        else:
            why = "the daemon ended it"
        if not self._stream_delivered:
            self._failures += 1
            if self._max_retries is not None and self._failures > self._max_retries:
                if error is not None:
                    raise error
                raise StopIteration
        delay = self._backoff.delay(self._failures, self._rng) if self._failures else 0.0
        _log.info(
            "watch: stream ended (%s); reconnecting in %.2fs from revision %d",
            why,
            delay,
            self._resume,
        )
        if delay and self._cancelled.wait(delay):
            return None
        if self._partial_snapshot and self._resume == 0:
            self._partial_snapshot = False
            return WatchEvent(type=WatchEventType.RESET, revision=0, workload=None)
        return None


def _resume_trailer(error: grpc.RpcError) -> int:
    """The daemon's wm-resume-revision trailer, or 0."""
    if not hasattr(error, "trailing_metadata"):
        return 0
    metadata: Sequence[tuple[str, Any]] = error.trailing_metadata() or ()
    for key, value in metadata:
        if key == RESUME_TRAILER:
            try:
                return int(value)
            except ValueError:
                return 0
    return 0
