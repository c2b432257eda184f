"""Watch's resume bookkeeping, over scripted streams.

Each test scripts what successive WatchWorkloads streams deliver (events,
then how the stream ends) and checks what the caller sees and which
resume_revision each reconnection asks for. The daemon side of the same
behaviour is tested against the real daemon in test_daemon.py.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Iterable

import grpc
import pytest

from workloadmap import Backoff, Watch, WatchEventType
from workloadmap.v1 import service_pb2, workload_pb2

ADDED = service_pb2.WorkloadEvent.ADDED
MODIFIED = service_pb2.WorkloadEvent.MODIFIED
DELETED = service_pb2.WorkloadEvent.DELETED
SYNCED = service_pb2.WorkloadEvent.SYNCED

NO_WAIT = Backoff(initial=0.0, maximum=0.0)


class StreamError(grpc.RpcError):
    """How a gRPC stream fails: the error is the call, with code and trailers."""

    def __init__(
        self, code: grpc.StatusCode, details: str = "", trailers: Iterable[tuple[str, str]] = ()
    ):
        super().__init__(details)
        self._code = code
        self._details = details
        self._trailers = tuple(trailers)

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return self._details

    def trailing_metadata(self) -> tuple[tuple[str, str], ...]:
        return self._trailers


class Stream:
    """A scripted response stream: events, then an error or a clean end."""

    def __init__(self, events: list[service_pb2.WorkloadEvent], end: StreamError | None = None):
        self.events = list(events)
        self.end = end
        self.cancelled = False

    def __iter__(self) -> Stream:
        return self

    def __next__(self) -> service_pb2.WorkloadEvent:
        if self.cancelled:
            raise StreamError(grpc.StatusCode.CANCELLED, "Locally cancelled by application!")
        if self.events:
            return self.events.pop(0)
        if self.end is not None:
            raise self.end
        raise StopIteration

    def cancel(self) -> None:
        self.cancelled = True


class Daemon:
    """Hands out the scripted streams and records each request."""

    def __init__(self, *streams: Stream):
        self.streams = list(streams)
        self.requests: list[service_pb2.WatchWorkloadsRequest] = []

    def __call__(self, request: service_pb2.WatchWorkloadsRequest) -> Stream:
        self.requests.append(request)
        assert self.streams, f"unexpected reconnection with {request}"
        return self.streams.pop(0)

    @property
    def resumes(self) -> list[int]:
        return [r.resume_revision for r in self.requests]


def event(kind: int, revision: int, name: str = "") -> service_pb2.WorkloadEvent:
    e = service_pb2.WorkloadEvent(type=kind, revision=revision)
    if name:
        e.workload.ref.CopyFrom(workload_pb2.ObjectRef(namespace="ml", name=name))
    return e


def take(watch: Watch, n: int) -> list[tuple[str, int, str]]:
    out = []
    for _ in range(n):
        e = next(watch)
        out.append((e.type.name, e.revision, e.workload.ref.name if e.workload is not None else ""))
    return out


def unavailable() -> StreamError:
    return StreamError(grpc.StatusCode.UNAVAILABLE, "Connection refused")


def test_resumes_after_resource_exhausted_from_last_event() -> None:
    behind = StreamError(
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        "the client fell behind; resume with resume_revision 30",
        [("wm-resume-revision", "30")],
    )
    daemon = Daemon(
        # Snapshot events carry each view's own revision, in no order.
        Stream(
            [
                event(ADDED, 12, "a"),
                event(ADDED, 7, "b"),
                event(SYNCED, 20),
                event(MODIFIED, 30, "a"),
            ],
            behind,
        ),
        Stream([event(SYNCED, 30), event(DELETED, 31, "b")]),
    )
    watch = Watch(daemon, service_pb2.WatchWorkloadsRequest(namespace="ml"), backoff=NO_WAIT)
    assert take(watch, 6) == [
        ("ADDED", 12, "a"),
        ("ADDED", 7, "b"),
        ("SYNCED", 20, ""),
        ("MODIFIED", 30, "a"),
        ("SYNCED", 30, ""),
        ("DELETED", 31, "b"),
    ]
    assert daemon.resumes == [0, 30]
    assert all(r.namespace == "ml" for r in daemon.requests)
    assert watch.resume_revision == 31


def test_resume_point_is_the_last_event_received_not_the_trailer(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The daemon says it wrote up to 35, but 35 never arrived: resuming after
    # 30 gets it again rather than skipping it.
    behind = StreamError(grpc.StatusCode.RESOURCE_EXHAUSTED, "", [("wm-resume-revision", "35")])
    daemon = Daemon(
        Stream([event(SYNCED, 20), event(MODIFIED, 30, "a")], behind),
        Stream([event(MODIFIED, 35, "a"), event(SYNCED, 35)]),
    )
    watch = Watch(daemon, service_pb2.WatchWorkloadsRequest(), backoff=NO_WAIT)
    assert [e[1] for e in take(watch, 4)] == [20, 30, 35, 35]
    assert daemon.resumes == [0, 30]
    assert "daemon wrote up to 35, received up to 30" in caplog.text


def test_snapshot_revisions_are_not_resume_points() -> None:
    # A snapshot broken off before SYNCED cannot be resumed: the caller is
    # told to forget it (RESET) and gets a whole new one.
    daemon = Daemon(
        Stream([event(ADDED, 12, "a"), event(ADDED, 7, "b")], unavailable()),
        Stream([event(ADDED, 12, "a"), event(SYNCED, 40)]),
    )
    watch = Watch(daemon, service_pb2.WatchWorkloadsRequest(), backoff=NO_WAIT)
    assert take(watch, 5) == [
        ("ADDED", 12, "a"),
        ("ADDED", 7, "b"),
        ("RESET", 0, ""),
        ("ADDED", 12, "a"),
        ("SYNCED", 40, ""),
    ]
    assert daemon.resumes == [0, 0]


def test_unavailable_before_any_event_retries_without_reset() -> None:
    daemon = Daemon(
        Stream([], unavailable()),
        Stream([], unavailable()),
        Stream([event(ADDED, 5, "a"), event(SYNCED, 9)]),
    )
    watch = Watch(daemon, service_pb2.WatchWorkloadsRequest(), backoff=NO_WAIT)
    assert take(watch, 2) == [("ADDED", 5, "a"), ("SYNCED", 9, "")]
    assert daemon.resumes == [0, 0, 0]


def test_resumed_stream_backlog_events_are_resume_points() -> None:
    # Started from a revision: the backlog before SYNCED has real revisions.
    daemon = Daemon(
        Stream([event(MODIFIED, 101, "a"), event(DELETED, 102, "b")], unavailable()),
        Stream([event(MODIFIED, 103, "a"), event(SYNCED, 103)]),
    )
    watch = Watch(daemon, service_pb2.WatchWorkloadsRequest(resume_revision=100), backoff=NO_WAIT)
    assert watch.resume_revision == 100
    assert take(watch, 4) == [
        ("MODIFIED", 101, "a"),
        ("DELETED", 102, "b"),
        ("MODIFIED", 103, "a"),
        ("SYNCED", 103, ""),
    ]
    assert daemon.resumes == [100, 102]


def test_out_of_range_resets_and_takes_a_snapshot() -> None:
    gone = StreamError(
        grpc.StatusCode.OUT_OF_RANGE, "revision 100 is no longer in the daemon's history"
    )
    daemon = Daemon(
        Stream([event(SYNCED, 100), event(MODIFIED, 101, "a")], unavailable()),
        # The daemon restarted: its history starts after 101.
        Stream([], gone),
        Stream([event(ADDED, 900, "a"), event(SYNCED, 901)]),
    )
    watch = Watch(daemon, service_pb2.WatchWorkloadsRequest(), backoff=NO_WAIT)
    assert take(watch, 5) == [
        ("SYNCED", 100, ""),
        ("MODIFIED", 101, "a"),
        ("RESET", 0, ""),
        ("ADDED", 900, "a"),
        ("SYNCED", 901, ""),
    ]
    assert daemon.resumes == [0, 101, 0]


def test_out_of_range_raised_when_asked() -> None:
    gone = StreamError(grpc.StatusCode.OUT_OF_RANGE, "gone")
    watch = Watch(
        Daemon(Stream([], gone)),
        service_pb2.WatchWorkloadsRequest(resume_revision=5),
        backoff=NO_WAIT,
        restart_on_out_of_range=False,
    )
    with pytest.raises(grpc.RpcError) as raised:
        next(watch)
    assert raised.value.code() == grpc.StatusCode.OUT_OF_RANGE


@pytest.mark.parametrize("code", [grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND])
def test_errors_retrying_cannot_mend_are_raised(code: grpc.StatusCode) -> None:
    watch = Watch(
        Daemon(Stream([], StreamError(code, "bad"))),
        service_pb2.WatchWorkloadsRequest(),
        backoff=NO_WAIT,
    )
    with pytest.raises(grpc.RpcError) as raised:
        next(watch)
    assert raised.value.code() == code


def test_max_retries_counts_consecutive_failures() -> None:
    daemon = Daemon(
        Stream([], unavailable()),
        Stream([event(SYNCED, 10)], unavailable()),  # progress: the count restarts
        Stream([], unavailable()),
        Stream([], unavailable()),
        Stream([], unavailable()),
    )
    watch = Watch(daemon, service_pb2.WatchWorkloadsRequest(), backoff=NO_WAIT, max_retries=2)
    assert take(watch, 1) == [("SYNCED", 10, "")]
    with pytest.raises(grpc.RpcError) as raised:
        next(watch)
    assert raised.value.code() == grpc.StatusCode.UNAVAILABLE
    assert daemon.resumes == [0, 0, 10, 10, 10]


def test_clean_stream_end_reconnects_at_once() -> None:
    daemon = Daemon(Stream([event(SYNCED, 10), event(ADDED, 11, "a")]), Stream([event(SYNCED, 11)]))
    # A huge backoff would hang the test if a stream that delivered waited.
    watch = Watch(
        daemon, service_pb2.WatchWorkloadsRequest(), backoff=Backoff(initial=3600, maximum=3600)
    )
    assert take(watch, 3) == [("SYNCED", 10, ""), ("ADDED", 11, "a"), ("SYNCED", 11, "")]
    assert daemon.resumes == [0, 11]


def test_unknown_event_types_are_skipped() -> None:
    daemon = Daemon(Stream([event(SYNCED, 10), event(42, 11), event(MODIFIED, 12, "a")]))
    watch = Watch(daemon, service_pb2.WatchWorkloadsRequest(), backoff=NO_WAIT)
    assert take(watch, 2) == [("SYNCED", 10, ""), ("MODIFIED", 12, "a")]
    assert watch.resume_revision == 12


def test_backoff_grows_to_its_maximum_with_jitter() -> None:
    backoff = Backoff(initial=0.5, maximum=4.0)
    rng = random.Random(1)
    for failures, ceiling in [(1, 0.5), (2, 1.0), (3, 2.0), (4, 4.0), (5, 4.0), (100, 4.0)]:
        for _ in range(50):
            assert ceiling / 2 <= backoff.delay(failures, rng) <= ceiling


def test_cancel_from_another_thread_ends_a_blocked_iteration() -> None:
    release = threading.Event()

    class Blocking(Stream):
        def __next__(self) -> service_pb2.WorkloadEvent:
            if self.events:
                return self.events.pop(0)
            release.wait(10)
            raise StreamError(grpc.StatusCode.CANCELLED, "Locally cancelled by application!")

        def cancel(self) -> None:
            release.set()

    watch = Watch(
        Daemon(Blocking([event(SYNCED, 10)])), service_pb2.WatchWorkloadsRequest(), backoff=NO_WAIT
    )
    seen = []

    def consume() -> None:
        seen.extend(e.type for e in watch)

    consumer = threading.Thread(target=consume)
    consumer.start()
    while not seen:
        consumer.join(0.01)
    watch.cancel()
    consumer.join(5)
    assert not consumer.is_alive()
    assert seen == [WatchEventType.SYNCED]


def test_waits_between_failed_attempts_and_cancel_interrupts_the_wait() -> None:
    daemon = Daemon(Stream([], unavailable()), Stream([], unavailable()))
    watch = Watch(
        daemon, service_pb2.WatchWorkloadsRequest(), backoff=Backoff(initial=3600, maximum=3600)
    )
    threading.Timer(0.2, watch.cancel).start()
    assert list(watch) == []
    assert daemon.resumes == [0]
