"""The client against the real workloadmapd over a real kube-apiserver.

Run by integration_tests/clients/python_test.sh, which creates the demo
JobSets (create-demo.sh: leader 1 pod with 4 GPUs, worker 2 pods with 4 GPUs
each, all Running and Ready) and starts the daemon; see conftest.py.
"""

from __future__ import annotations

import collections
import contextlib
import pathlib
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator

import grpc
import pytest

from conftest import Daemon, EventReader, env, free_port
from workloadmap import Backoff, Client, Watch, WatchEventType, object_ref
from workloadmap.v1 import service_pb2, workload_pb2

GPU = "nvidia.com/gpu"


def pods_of(client: Client, namespace: str, name: str) -> dict[str, list[str]]:
    """Pod names per replicated job ("leader", "worker") of a demo JobSet."""
    workload = client.resolve(namespace, "jobset", name, include_pods=True).workload
    (replicated_jobs,) = workload.root.instances[0].children
    return {i.id: [p.name for p in i.pods] for i in replicated_jobs.instances}


def test_health(address: str) -> None:
    with Client(address) as client:
        assert client.health() == "SERVING"
        assert client.health("") == "SERVING"


def test_resolve_demo(address: str, namespace: str) -> None:
    with Client(address) as client:
        response = client.resolve(namespace, "jobset", "demo")
    workload = response.workload
    assert response.revision > 0
    assert (workload.ref.kind, workload.ref.namespace, workload.ref.name) == (
        "JobSet",
        namespace,
        "demo",
    )
    assert workload.resources.quantities[GPU] == 12
    assert list(workload.status.matched_statuses) == ["Running"]
    (replicated_jobs,) = workload.root.instances[0].children
    rows = {
        i.id: (i.replicas.desired, i.replicas.ready, i.resources.quantities[GPU])
        for i in replicated_jobs.instances
    }
    assert rows == {"leader": (1, 1, 4), "worker": (2, 2, 8)}


@pytest.mark.parametrize(
    "ref",
    [
        pytest.param(("JobSet", "demo"), id="kind"),
        pytest.param(("jobsets.jobset.x-k8s.io/demo", ""), id="resource.group/name"),
    ],
)
def test_resolve_by_type_forms_and_ref(
    tcp_address: str, namespace: str, ref: tuple[str, str]
) -> None:
    with Client(tcp_address) as client:
        by_strings = client.resolve(namespace, *ref).workload
        by_ref = client.resolve(object_ref(namespace, *ref)).workload
    assert by_strings.ref.uid and by_strings.ref.uid == by_ref.ref.uid


def test_resolve_with_pods_and_top_owner(tcp_address: str, namespace: str) -> None:
    with Client(tcp_address) as client:
        pods = pods_of(client, namespace, "demo")
        assert {k: len(v) for k, v in pods.items()} == {"leader": 1, "worker": 2}
        pod_ref = workload_pb2.ObjectRef(namespace=namespace, kind="Pod", name=pods["worker"][0])
        owner = client.resolve(pod_ref, top_owner=True).workload
    assert (owner.ref.kind, owner.ref.name) == ("JobSet", "demo")


def test_not_found(address: str, namespace: str) -> None:
    with Client(address) as client, pytest.raises(grpc.RpcError) as raised:
        client.resolve(namespace, "JobSet", "no-such-jobset")
    assert raised.value.code() == grpc.StatusCode.NOT_FOUND
    assert "no-such-jobset" in raised.value.details()


def test_list_follows_pages(tcp_address: str, namespace: str, demos: list[str]) -> None:
    with Client(tcp_address) as client:
        calls: list[service_pb2.ListWorkloadsRequest] = []
        list_page = client.stub.ListWorkloads

        def counting(request: service_pb2.ListWorkloadsRequest, **kwargs: object) -> object:
            calls.append(service_pb2.ListWorkloadsRequest(page_token=request.page_token))
            return list_page(request, **kwargs)

        client.stub.ListWorkloads = counting
        names = [s.ref.name for s in client.list_workloads(namespace, page_size=1)]
        everything = {s.ref.name: s for s in client.list_workloads(namespace)}
    assert collections.Counter(names) == collections.Counter(demos), names
    assert len(calls) >= len(demos), "page_size=1 must take a call per workload"
    assert calls[0].page_token == "" and all(c.page_token for c in calls[1 : len(demos)])
    summary = everything["demo"]
    assert summary.gpus == 12
    assert [(c.instance_id, c.replicas.desired, c.gpus) for c in summary.components] == [
        ("leader", 1, 4),
        ("worker", 2, 8),
    ]


def test_list_filters(tcp_address: str, namespace: str, demos: list[str]) -> None:
    with Client(tcp_address) as client:
        running = [
            s.ref.name
            for s in client.list_workloads(namespace, kinds=["JobSet"], statuses=["Running"])
        ]
        failed = list(client.list_workloads(namespace, statuses=["Failed"]))
        with pytest.raises(grpc.RpcError) as raised:
            list(client.list_workloads(namespace, label_selector="a in (b"))
    assert sorted(running) == sorted(demos)
    assert failed == []
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_gang_for_a_demo_pod(unix_address: str, namespace: str) -> None:
    with Client(unix_address) as client:
        pod = pods_of(client, namespace, "demo")["leader"][0]
        response = client.gang(namespace, pod)
        with pytest.raises(grpc.RpcError) as raised:
            client.gang(namespace, "no-such-pod")
    assert response.assignment.pod == pod
    assert response.assignment.pod_group and not response.assignment.error
    assert (response.top_owner.kind, response.top_owner.name) == ("JobSet", "demo")
    (group,) = response.gang.pod_groups
    assert group.name == response.assignment.pod_group and group.min_member == 3
    assert raised.value.code() == grpc.StatusCode.NOT_FOUND


def ready_workers(workload: workload_pb2.ResolvedWorkload) -> int:
    (replicated_jobs,) = workload.root.instances[0].children
    return next(i.replicas.ready for i in replicated_jobs.instances if i.id == "worker")


def wait_ready_workers(client: Client, namespace: str, name: str, want: int) -> None:
    """Waits until the daemon has seen a readiness change."""
    deadline = time.monotonic() + 30
    while ready_workers(client.resolve(namespace, "jobset", name).workload) != want:
        assert time.monotonic() < deadline, f"{name}: ready workers never became {want}"
        time.sleep(0.05)


def last_demo_worker(
    client: Client, namespace: str, demos: list[str], index: int
) -> tuple[str, str]:
    """The last demo JobSet's name, and the name of its worker pod number index."""
    target = demos[-1]
    return target, pods_of(client, namespace, target)["worker"][index]


@contextlib.contextmanager
def unready(set_pod_ready: Callable[[str, bool], None], pod: str) -> Iterator[None]:
    """The pod is not Ready inside the block, and Ready again after it, however it ends."""
    try:
        set_pod_ready(pod, False)
        yield
    finally:
        set_pod_ready(pod, True)


def test_watch_snapshot_then_changes(
    unix_address: str,
    namespace: str,
    demos: list[str],
    set_pod_ready: Callable[[str, bool], None],
    read_events: Callable[[Watch], EventReader],
) -> None:
    with Client(unix_address) as client:
        target, worker = last_demo_worker(client, namespace, demos, 0)
        events = read_events(client.watch(namespace))
        snapshot = events.until(lambda e: e.type == WatchEventType.SYNCED)
        assert [e.type for e in snapshot[:-1]] == [WatchEventType.ADDED] * len(demos)
        assert sorted(e.workload.ref.name for e in snapshot[:-1]) == sorted(demos)
        synced = snapshot[-1].revision
        with unready(set_pod_ready, worker):
            change = events.next()
            assert change.type == WatchEventType.MODIFIED
            assert change.workload.ref.name == target
            assert change.revision > synced
            assert ready_workers(change.workload) == 1
        back = events.until(
            lambda e: e.type == WatchEventType.MODIFIED and ready_workers(e.workload) == 2
        )
        assert all(e.type == WatchEventType.MODIFIED for e in back)
        assert back[-1].revision > change.revision
        # (The reader thread may already hold later events.)
        assert events.watch.resume_revision >= back[-1].revision


def test_watch_resumes_without_a_snapshot(
    tcp_address: str,
    namespace: str,
    demos: list[str],
    set_pod_ready: Callable[[str, bool], None],
    read_events: Callable[[Watch], EventReader],
) -> None:
    with Client(tcp_address) as client:
        target, worker = last_demo_worker(client, namespace, demos, 1)
        first = read_events(client.watch(namespace))
        first.until(lambda e: e.type == WatchEventType.SYNCED)
        first.close()
        left_at = first.watch.resume_revision
        with unready(set_pod_ready, worker):  # while nobody watches
            wait_ready_workers(client, namespace, target, 1)
            resumed = read_events(client.watch(namespace, resume_revision=left_at))
            backlog = resumed.until(lambda e: e.type == WatchEventType.SYNCED)
    # Only what changed since: no ADDED snapshot, no RESET.
    assert backlog[0].type == WatchEventType.MODIFIED, backlog
    assert all(e.type == WatchEventType.MODIFIED for e in backlog[:-1])
    assert all(e.workload.ref.name == target for e in backlog[:-1])
    assert backlog[0].revision > left_at
    assert ready_workers(backlog[-2].workload) == 1


def test_close_ends_running_watches(
    unix_address: str, namespace: str, read_events: Callable[[Watch], EventReader]
) -> None:
    client = Client(unix_address)
    events = read_events(client.watch(namespace))
    events.until(lambda e: e.type == WatchEventType.SYNCED)
    client.close()
    # Events the reader thread took before the close may come first (the
    # namespace can still be settling from an earlier test); after them the
    # iteration must end cleanly, not raise and not hang.
    with pytest.raises(AssertionError, match="the watch ended"):
        for _ in range(10_000):
            events.next(timeout=10)


def test_watch_rejects_a_bad_selector(tcp_address: str, namespace: str) -> None:
    with (
        Client(tcp_address) as client,
        client.watch(namespace, label_selector="a in (b") as watch,
        pytest.raises(grpc.RpcError) as raised,
    ):
        next(watch)
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_watch_survives_a_daemon_restart(
    namespace: str,
    demos: list[str],
    run_daemon: Callable[..., Daemon],
    read_events: Callable[[Watch], EventReader],
) -> None:
    kubeconfig = env("KUBECONFIG")
    address = f"127.0.0.1:{free_port()}"
    daemon = run_daemon(
        "--kubeconfig",
        kubeconfig,
        "--namespace",
        namespace,
        "--listen",
        address,
        "--shutdown-grace",
        "0",
    )
    with Client(address) as client:
        events = read_events(client.watch(backoff=Backoff(initial=0.05, maximum=0.5)))
        first = events.until(lambda e: e.type == WatchEventType.SYNCED)
        assert sorted(e.workload.ref.name for e in first[:-1]) == sorted(demos)

        daemon.stop()
        daemon.start()
        # The new process has none of the old revisions: RESET, then the
        # workloads again (in the snapshot, or after SYNCED as the new daemon
        # resolves them, when the watch reconnected before it was ready).
        assert events.next().type == WatchEventType.RESET
        seen: list[tuple[str, str, str]] = []
        jobsets: set[str] = set()
        synced = False
        while not synced or jobsets != set(demos):
            try:
                e = events.next()
            except AssertionError as timeout:
                raise AssertionError(f"after RESET: {seen}") from timeout
            if e.type == WatchEventType.SYNCED:
                synced = True
                continue
            ref = e.workload.ref
            seen.append((e.type.name, ref.kind, ref.name))
            if ref.kind == "JobSet" and e.type == WatchEventType.DELETED:
                jobsets.discard(ref.name)
            elif ref.kind == "JobSet":
                jobsets.add(ref.name)
        # The watch now follows the new process's revisions, which start at a
        # random point (not after the old ones).
        assert events.watch.resume_revision not in (0, first[-1].revision)


def test_tls_and_mutual_tls(
    seed_dir: pathlib.Path, run_daemon: Callable[..., Daemon], tmp_path: pathlib.Path
) -> None:
    if shutil.which("openssl") is None:
        pytest.skip("needs openssl")
    pki = tmp_path / "pki"
    pki.mkdir()
    make_pki(pki)
    manifests = tmp_path / "manifests"
    manifests.mkdir()
    shutil.copy(seed_dir / "cluster-state.yaml", manifests)
    address = f"127.0.0.1:{free_port()}"
    run_daemon(
        "--snapshot", str(manifests), "--listen", address,
        "--tls-cert", str(pki / "server.crt"), "--tls-key", str(pki / "server.key"),
        "--tls-client-ca", str(pki / "ca.crt"), "--tls-require-client-cert",
    )  # fmt: skip
    ca = (pki / "ca.crt").read_bytes()
    mutual = grpc.ssl_channel_credentials(
        root_certificates=ca,
        private_key=(pki / "client.key").read_bytes(),
        certificate_chain=(pki / "client.crt").read_bytes(),
    )
    with Client(address, credentials=mutual) as client:
        assert client.resolve("default", "JobSet", "demo").workload.resources.quantities[GPU] == 12
    # Without a client certificate, or in plaintext, the handshake fails.
    for credentials in (grpc.ssl_channel_credentials(root_certificates=ca), None):
        with Client(address, credentials=credentials, timeout=5) as client:
            with pytest.raises(grpc.RpcError) as raised:
                client.health()
            assert raised.value.code() == grpc.StatusCode.UNAVAILABLE


def make_pki(pki: pathlib.Path) -> None:
    """A CA, and server and client certificates for localhost signed by it."""

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=pki, check=True, capture_output=True)

    key = ["-newkey", "rsa:2048", "-nodes"]
    ca = ["-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial"]
    openssl(
        "req", "-x509", *key, "-days", "1", "-keyout", "ca.key", "-out", "ca.crt", "-subj", "/CN=ca"
    )
    for name in ("server", "client"):
        (pki / f"{name}.ext").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
        openssl(
            "req", *key, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={name}"
        )
        openssl("x509", "-req", *ca, "-days", "1", "-extfile", f"{name}.ext", "-in", f"{name}.csr",
                "-out", f"{name}.crt")  # fmt: skip


def kubectl(*args: str) -> str:
    binary = pathlib.Path(env("WM_TESTBED_BIN")) / "kubectl"
    return subprocess.run(
        [str(binary), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


def test_a_token_file_authenticates_the_caller(
    namespace: str, demos: list[str], run_daemon: Callable[..., Daemon], tmp_path: pathlib.Path
) -> None:
    address = f"127.0.0.1:{free_port()}"
    run_daemon(
        "--kubeconfig",
        env("KUBECONFIG"),
        "--namespace",
        namespace,
        "--listen",
        address,
        "--authentication=kubernetes",
        "--token-audiences=workloadmap",
    )
    sa = f"py-client-{time.monotonic_ns() % 1000000}"
    kubectl("-n", namespace, "create", "serviceaccount", sa)
    try:
        kubectl(
            "-n",
            namespace,
            "create",
            "role",
            sa,
            "--verb=get",
            "--resource=jobsets.jobset.x-k8s.io",
        )
        kubectl(
            "-n",
            namespace,
            "create",
            "rolebinding",
            sa,
            f"--role={sa}",
            f"--serviceaccount={namespace}:{sa}",
        )
        token_file = tmp_path / "token"
        token_file.write_text(
            kubectl("-n", namespace, "create", "token", sa, "--audience=workloadmap") + "\n"
        )

        with Client(address) as anonymous, pytest.raises(grpc.RpcError) as refused:
            anonymous.resolve(namespace, "jobset", demos[0])
        assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED

        with Client(address, token_file=token_file) as client:
            deadline = time.monotonic() + 30
            while True:  # RBAC's informers catch up with the new Role
                try:
                    resolved = client.resolve(namespace, "jobset", demos[0])
                    break
                except grpc.RpcError as e:
                    if e.code() != grpc.StatusCode.PERMISSION_DENIED or time.monotonic() > deadline:
                        raise
                    time.sleep(0.1)
            assert resolved.workload.ref.name == demos[0]
            # The file is re-read when it changes.
            token_file.write_text("not-a-token")
            with pytest.raises(grpc.RpcError) as rejected:
                client.resolve(namespace, "jobset", demos[0])
            assert rejected.value.code() == grpc.StatusCode.UNAUTHENTICATED
    finally:
        subprocess.run(
            [
                str(pathlib.Path(env("WM_TESTBED_BIN")) / "kubectl"),
                "-n",
                namespace,
                "delete",
                "serviceaccount,role,rolebinding",
                sa,
                "--ignore-not-found",
            ],
            check=False,
            capture_output=True,
        )


def test_token_and_token_file_are_exclusive(tmp_path: pathlib.Path) -> None:
    with pytest.raises(ValueError, match="not both"):
        Client("127.0.0.1:1", token="t", token_file=tmp_path / "token")
