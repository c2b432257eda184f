"""Fixtures for the tests against a real workloadmapd.

integration_tests/clients/python_test.sh sets the environment; without it
those tests are skipped (the unit tests still run):

  WM_ADDRESS          the daemon's TCP address (HOST:PORT)
  WM_SOCKET           the same daemon's Unix socket (unix:PATH)
  WM_TEST_NAMESPACE   a namespace holding the create-demo.sh workloads
  WM_TEST_DEMOS       their names, comma-separated (default: demo)
  WM_SEED_DIR         integration_tests/seed (set-pod-ready.sh, manifests)
  WM_DAEMON_BIN       workloadmapd, for tests that run daemons of their own
  KUBECONFIG, WM_TESTBED_BIN   the testbed (the seed scripts use them)
"""

from __future__ import annotations

import os
import pathlib
import queue
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from workloadmap import Watch, WatchEvent


def env(name: str) -> str:
    value = os.environ.get(name, "")
    if not value:
        pytest.skip(f"${name} is not set (run integration_tests/clients/python_test.sh)")
    return value


@pytest.fixture(scope="session")
def tcp_address() -> str:
    return env("WM_ADDRESS")


@pytest.fixture(scope="session")
def unix_address() -> str:
    return env("WM_SOCKET")


@pytest.fixture(params=["tcp", "unix"])
def address(request: pytest.FixtureRequest) -> str:
    """Each test using it runs over TCP and over the Unix socket."""
    return env("WM_ADDRESS" if request.param == "tcp" else "WM_SOCKET")


@pytest.fixture(scope="session")
def namespace() -> str:
    return env("WM_TEST_NAMESPACE")


@pytest.fixture(scope="session")
def demos() -> list[str]:
    return os.environ.get("WM_TEST_DEMOS", "demo").split(",")


@pytest.fixture(scope="session")
def seed_dir() -> pathlib.Path:
    return pathlib.Path(env("WM_SEED_DIR"))


@pytest.fixture(scope="session")
def set_pod_ready(seed_dir: pathlib.Path, namespace: str) -> Callable[[str, bool], None]:
    """Flips a pod's readiness as the kubelet would.

    Only the pod is written (--no-propagate): its readiness alone sets the
    replica counts the daemon reports, and one write instead of three keeps
    the tests fast. The Job and JobSet status are left as they were, so a
    flip and its undo leave the demo as created.
    """

    def flip(pod: str, ready: bool) -> None:
        subprocess.run(
            [
                str(seed_dir / "set-pod-ready.sh"),
                "--namespace",
                namespace,
                "--no-propagate",
                pod,
                str(ready).lower(),
            ],
            check=True,
            capture_output=True,
            timeout=60,
        )

    return flip


class EventReader:
    """Reads a Watch on a thread, so a test can wait for events with a deadline."""

    def __init__(self, watch: Watch) -> None:
        self.watch = watch
        self._events: queue.Queue[WatchEvent | BaseException | None] = queue.Queue()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            for e in self.watch:
                self._events.put(e)
            self._events.put(None)
        except BaseException as error:  # handed to the test's thread
            self._events.put(error)

    def next(self, timeout: float = 30) -> WatchEvent:
        try:
            item = self._events.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no watch event within {timeout}s") from None
        if isinstance(item, BaseException):
            raise item
        if item is None:
            raise AssertionError("the watch ended")
        return item

    def until(
        self, predicate: Callable[[WatchEvent], bool], timeout: float = 30
    ) -> list[WatchEvent]:
        """Events up to and including the first that satisfies predicate."""
        deadline = time.monotonic() + timeout
        seen = []
        while True:
            e = self.next(max(deadline - time.monotonic(), 0.01))
            seen.append(e)
            if predicate(e):
                return seen

    def close(self) -> None:
        self.watch.cancel()
        self._thread.join(10)
        assert not self._thread.is_alive(), "the watch did not end on cancel()"


@pytest.fixture
def read_events() -> Iterator[Callable[[Watch], EventReader]]:
    readers: list[EventReader] = []

    def start(watch: Watch) -> EventReader:
        readers.append(EventReader(watch))
        return readers[-1]

    yield start
    for reader in readers:
        reader.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Daemon:
    """A workloadmapd this test runs: started, stopped and restarted by it."""

    def __init__(self, binary: str, args: list[str], log_dir: pathlib.Path) -> None:
        self.binary = binary
        self.args = args
        self.log_dir = log_dir
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self) -> None:
        self.starts += 1
        log = self.log_dir / f"workloadmapd-{self.starts}.log"
        with open(log, "wb") as out:
            self.process = subprocess.Popen(
                [self.binary, "--metrics-address", "off", *self.args],
                stderr=out,
                stdout=subprocess.DEVNULL,
            )
        deadline = time.monotonic() + 60
        while " INFO ready " not in log.read_text():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.process.kill()
                self.process.wait()
                self.process = None
                raise AssertionError(f"workloadmapd did not become ready:\n{log.read_text()}")
            time.sleep(0.05)

    def stop(self) -> None:
        """SIGTERM, as an orchestrator would; the daemon must exit 0 within 10s."""
        if self.process is None:
            return
        process, self.process = self.process, None
        if process.poll() is not None:
            raise AssertionError(f"workloadmapd exited early ({process.returncode})")
        process.send_signal(signal.SIGTERM)
        try:
            code = process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise AssertionError("workloadmapd did not exit within 10s of SIGTERM") from None
        assert code == 0, f"workloadmapd exited {code} after SIGTERM"


@pytest.fixture
def run_daemon() -> Iterator[Callable[..., Daemon]]:
    """Starts workloadmapd with the given flags (and --metrics-address off)."""
    binary = env("WM_DAEMON_BIN")
    started: list[Daemon] = []
    with tempfile.TemporaryDirectory(prefix="wm-pytest-") as logs:

        def run(*args: str) -> Daemon:
            daemon = Daemon(binary, list(args), pathlib.Path(logs))
            started.append(daemon)
            daemon.start()
            return daemon

        yield run
        for daemon in started:
            daemon.stop()
