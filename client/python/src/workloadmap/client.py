"""A small helper over the workloadmap.v1 stubs: dial, resolve, list, watch.

Every method raises grpc.RpcError when the call fails; `error.code()` is a
grpc.StatusCode and `error.details()` the daemon's message:

- NOT_FOUND: no such object (or cluster);
- FAILED_PRECONDITION: no definition covers the kind, or two do;
- INVALID_ARGUMENT: a bad request (the message names the field);
- UNAVAILABLE: the daemon is unreachable, or has not synced that kind yet
  (retry);
- DEADLINE_EXCEEDED: no answer within the call's timeout.

Anything the helper does not wrap is one call away on `Client.stub` (the
generated WorkloadMapStub: MutatePodSpecs, ListDefinitions,
ValidateDefinition).
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, overload

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from workloadmap._address import default_address, parse_address
from workloadmap._token import BearerToken as _BearerToken
from workloadmap._watch import Backoff, Watch
from workloadmap.v1 import service_pb2, service_pb2_grpc, workload_pb2

SERVICE_NAME = "workloadmap.v1.WorkloadMap"

Metadata = Sequence[tuple[str, str]]

# Channel options unless the caller's say otherwise: responses up to the
# daemon's own default limit (--max-message-bytes, 16 MiB; gRPC's is 4), and
# a ping every minute (the daemon accepts one every 10 s, even between calls)
# so that a watch on a connection that silently died fails and reconnects
# instead of waiting forever.
DEFAULT_OPTIONS: dict[str, Any] = {
    "grpc.max_receive_message_length": 16 << 20,
    "grpc.keepalive_time_ms": 60_000,
    "grpc.keepalive_timeout_ms": 20_000,
    "grpc.keepalive_permit_without_calls": 1,
    # Else gRPC stops pinging after two pings on a stream that sends nothing.
    "grpc.http2.max_pings_without_data": 0,
}


def object_ref(
    namespace: str, type: str, name: str = "", *, cluster: str = ""
) -> workload_pb2.ObjectRef:
    """An ObjectRef from wmctl's TYPE syntax.

    Args:
        namespace: the object's namespace.
        type: a Kind ("JobSet"), a plural resource ("jobsets"), either
            followed by .GROUP ("jobsets.jobset.x-k8s.io"), or any of these
            followed by /NAME ("jobset/demo") when `name` is empty. As in
            wmctl, a Kind starts with an uppercase letter.
        name: the object's name.
        cluster: the kubeconfig context of the cluster; empty is the
            daemon's default.

    Raises:
        ValueError: no type or no name.
    """
    if not name and "/" in type:
        type, _, name = type.rpartition("/")
    if not type or not name:
        raise ValueError(f'object_ref needs TYPE and NAME, got type "{type}" and name "{name}"')
    head, _, group = type.partition(".")
    ref = workload_pb2.ObjectRef(cluster=cluster, namespace=namespace, group=group, name=name)
    if head[0].isupper():
        ref.kind = head
    else:
        ref.resource = head
    return ref


class Client:
    """A connection to workloadmapd.

    Use it as a context manager, or call close(). Safe to share between
    threads (one gRPC channel, one HTTP/2 connection).

    Example:
        with Client("127.0.0.1:50051") as client:
            workload = client.resolve("default", "jobset", "demo").workload
            for summary in client.list_workloads(statuses=["Running"]):
                print(summary.ref.name, summary.gpus)
    """

    def __init__(
        self,
        address: str | None = None,
        *,
        credentials: grpc.ChannelCredentials | None = None,
        timeout: float | None = 30.0,
        metadata: Metadata = (),
        token: str | None = None,
        token_file: str | os.PathLike[str] | None = None,
        options: Sequence[tuple[str, Any]] = (),
    ) -> None:
        """Dials the daemon (lazily: the connection opens on the first call).

        Args:
            address: HOST:PORT, unix:PATH or unix:///ABS/PATH (the syntax of
                workloadmapd --listen and wmctl --address). None takes
                $WM_ADDRESS, else 127.0.0.1:50051.
            credentials: TLS for a TCP address, e.g.
                grpc.ssl_channel_credentials(root_certificates=ca_pem) (add
                private_key and certificate_chain for mutual TLS). None is
                plaintext. Unix sockets are always plaintext.
            timeout: deadline in seconds of each unary call (watches have
                none); None waits forever.
            metadata: sent with every call (e.g. an authorization header
                for a proxy in front of the daemon).
            token: a bearer token sent with every call, for a daemon run with
                --authentication=kubernetes (it reviews the token with the
                cluster). Sent on plaintext connections too: use TLS or a
                Unix socket wherever others share the network.
            token_file: a file holding the token, re-read whenever it
                changes (the kubelet rotates projected ServiceAccount
                tokens), e.g. SERVICE_ACCOUNT_TOKEN_FILE in a pod.
            options: gRPC channel options, over DEFAULT_OPTIONS, e.g.
                [("grpc.max_receive_message_length", 64 << 20)].

        Raises:
            ValueError: a malformed address, credentials with a Unix
                socket, or both token and token_file.
        """
        if token is not None and token_file is not None:
            raise ValueError("give token or token_file, not both")
        self.address = address if address is not None else default_address()
        parsed = parse_address(self.address)
        if credentials is not None and parsed.unix:
            raise ValueError(
                f"{self.address}: Unix sockets are plaintext; TLS needs a HOST:PORT address"
            )
        channel_options = list({**DEFAULT_OPTIONS, **dict(options)}.items())
        if credentials is None:
            self.channel = grpc.insecure_channel(parsed.target, options=channel_options)
        else:
            self.channel = grpc.secure_channel(parsed.target, credentials, options=channel_options)
        self.stub = service_pb2_grpc.WorkloadMapStub(self.channel)
        self._health = health_pb2_grpc.HealthStub(self.channel)
        self._timeout = timeout
        self._metadata = tuple(metadata)
        self._token = _BearerToken(token, token_file) if token or token_file else None
        self._watches: weakref.WeakSet[Watch] = weakref.WeakSet()

    def close(self) -> None:
        """Closes the channel; the iteration of running watches ends."""
        for watch in list(self._watches):
            watch.cancel()
        self.channel.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @overload
    def resolve(
        self,
        ref: workload_pb2.ObjectRef,
        /,
        *,
        include_pods: bool = ...,
        pod_limit: int = ...,
        top_owner: bool = ...,
        timeout: float | None = ...,
    ) -> service_pb2.ResolveWorkloadResponse: ...

    @overload
    def resolve(
        self,
        namespace: str,
        type: str,
        name: str = ...,
        /,
        *,
        cluster: str = ...,
        include_pods: bool = ...,
        pod_limit: int = ...,
        top_owner: bool = ...,
        timeout: float | None = ...,
    ) -> service_pb2.ResolveWorkloadResponse: ...

    def resolve(
        self,
        target: workload_pb2.ObjectRef | str,
        type: str | None = None,
        name: str = "",
        /,
        *,
        cluster: str = "",
        include_pods: bool = False,
        pod_limit: int = 0,
        top_owner: bool = False,
        timeout: float | None = None,
    ) -> service_pb2.ResolveWorkloadResponse:
        """One workload from the daemon's cache (ResolveWorkload by reference).

        Called as resolve(ref) with an ObjectRef, or resolve(namespace, type,
        name) with wmctl's TYPE syntax (see object_ref): resolve("ml",
        "jobset", "demo"), resolve("ml", "jobsets.jobset.x-k8s.io/demo").

        Args:
            target: an ObjectRef, or the namespace.
            type: TYPE or TYPE/NAME, with a namespace.
            name: NAME, unless in type.
            cluster: the kubeconfig context, with a namespace; empty is the
                daemon's default.
            include_pods: list pods under their component instances (the
                replica counts are always there).
            pod_limit: pods listed per instance, unhealthy first; 0 lists all.
            top_owner: when the reference names an object inside a workload
                (a Pod, a Job of a JobSet), resolve the workload at the top of
                its controller chain.
            timeout: this call's deadline, instead of the client's.

        Returns:
            The response: `.workload` (a ResolvedWorkload: status, component
            tree, replicas, pods, resources, gang) and `.revision`.

        Raises:
            grpc.RpcError: NOT_FOUND for no such object; see the module doc.
            ValueError: a string target without type or name.
        """
        if isinstance(target, workload_pb2.ObjectRef):
            if type is not None or name or cluster:
                raise ValueError("resolve(ref) takes no type, name or cluster: the ref has them")
            ref = target
        else:
            if type is None:
                raise ValueError("resolve(namespace, type, name) needs a type")
            ref = object_ref(target, type, name, cluster=cluster)
        request = service_pb2.ResolveWorkloadRequest(
            ref=ref, include_pods=include_pods, pod_limit=pod_limit, top_owner=top_owner
        )
        return self.stub.ResolveWorkload(request, **self._call_args(timeout))

    def list_workloads(
        self,
        namespace: str = "",
        *,
        cluster: str = "",
        kinds: Iterable[str] = (),
        statuses: Iterable[str] = (),
        label_selector: str = "",
        page_size: int = 0,
        timeout: float | None = None,
    ) -> Iterator[service_pb2.WorkloadSummary]:
        """Top-level workloads, newest first, fetched a page at a time.

        A generator: each page is requested when the previous one is used up,
        following the daemon's page tokens, so any number of workloads is
        listed in bounded memory.

        Args:
            namespace: empty lists every namespace.
            cluster: a kubeconfig context of the daemon; empty lists all.
            kinds: "Kind", "resource" (plural) or "group/Kind"; empty: all.
            statuses: keep workloads with one of these matched statuses
                ("Running", "Failed", ...).
            label_selector: a Kubernetes label selector on the workload.
            page_size: workloads per call, at most the daemon's
                --max-page-size; 0 is the daemon's default (100).
            timeout: each page call's deadline, instead of the client's.

        Raises:
            grpc.RpcError: INVALID_ARGUMENT for a bad selector or page token;
                see the module doc.
        """
        request = service_pb2.ListWorkloadsRequest(
            cluster=cluster,
            namespace=namespace,
            kinds=list(kinds),
            statuses=list(statuses),
            label_selector=label_selector,
            page_size=page_size,
        )
        while True:
            response = self.stub.ListWorkloads(request, **self._call_args(timeout))
            yield from response.workloads
            if not response.next_page_token:
                return
            request.page_token = response.next_page_token

    def watch(
        self,
        namespace: str = "",
        *,
        cluster: str = "",
        kinds: Iterable[str] = (),
        label_selector: str = "",
        include_pods: bool = False,
        resume_revision: int = 0,
        backoff: Backoff | None = None,
        max_retries: int | None = None,
        restart_on_out_of_range: bool = True,
    ) -> Watch:
        """Changes of resolved workloads, resumed across disconnects.

        Iterate the returned Watch for WatchEvents: ADDED for every matching
        workload, SYNCED, then ADDED/MODIFIED/DELETED as they happen. After a
        disconnect it resumes after the last revision it yielded, with
        backoff; when the daemon cannot resume (it restarted: OUT_OF_RANGE) it
        yields RESET and a fresh snapshot. See Watch.

        Example:
            with client.watch("ml") as events:
                for event in events:
                    if event.type == WatchEventType.RESET:
                        state.clear()
                    elif event.type == WatchEventType.DELETED:
                        state.pop(event.workload.ref.uid, None)
                    elif event.workload is not None:
                        state[event.workload.ref.uid] = event.workload

        Args:
            namespace: empty watches every namespace.
            cluster: a kubeconfig context of the daemon; empty watches all.
            kinds: "Kind", "resource" (plural) or "group/Kind"; empty: all.
            label_selector: a Kubernetes label selector on the workload.
            include_pods: pods in the events' workloads.
            resume_revision: continue an earlier watch after this revision
                (its Watch.resume_revision) without a new snapshot; 0 starts
                with a snapshot.
            backoff: delays between reconnection attempts (None: Backoff()).
            max_retries: consecutive failed attempts before the error is
                raised; None retries forever.
            restart_on_out_of_range: False raises OUT_OF_RANGE instead of
                yielding RESET.

        Raises (while iterating):
            grpc.RpcError: what retrying cannot mend (INVALID_ARGUMENT,
                NOT_FOUND, ...), or the last error after max_retries.
        """
        request = service_pb2.WatchWorkloadsRequest(
            cluster=cluster,
            namespace=namespace,
            kinds=list(kinds),
            label_selector=label_selector,
            include_pods=include_pods,
            resume_revision=resume_revision,
        )
        watch = Watch(
            lambda r: self.stub.WatchWorkloads(r, metadata=self._call_metadata()),
            request,
            backoff=backoff or Backoff(),
            max_retries=max_retries,
            restart_on_out_of_range=restart_on_out_of_range,
        )
        self._watches.add(watch)
        return watch

    def gang(
        self, namespace: str, pod: str, *, cluster: str = "", timeout: float | None = None
    ) -> service_pb2.GetGangInstructionsResponse:
        """The pod group a pod belongs to (GetGangInstructions for a pod).

        Returns:
            `.gang` (the pod groups of the pod's top owner, as KAI Scheduler's
            Workload Map fallback would create them), `.assignment` (this
            pod's group and subgroup) and `.top_owner`.

        Raises:
            grpc.RpcError: NOT_FOUND for no such pod; see the module doc.
        """
        request = service_pb2.GetGangInstructionsRequest(
            pod=workload_pb2.ObjectRef(cluster=cluster, namespace=namespace, name=pod)
        )
        return self.stub.GetGangInstructions(request, **self._call_args(timeout))

    def health(self, service: str = SERVICE_NAME, *, timeout: float | None = None) -> str:
        """The daemon's grpc.health.v1 status for `service` ("" is overall).

        Returns:
            "SERVING" once every watched kind is synced and resolved,
            "NOT_SERVING" before that and while shutting down.

        Raises:
            grpc.RpcError: UNAVAILABLE when the daemon is unreachable;
                NOT_FOUND for an unknown service name.
        """
        response = self._health.Check(
            health_pb2.HealthCheckRequest(service=service), **self._call_args(timeout)
        )
        return health_pb2.HealthCheckResponse.ServingStatus.Name(response.status)

    def _call_args(self, timeout: float | None) -> dict[str, Any]:
        return {
            "timeout": timeout if timeout is not None else self._timeout,
            "metadata": self._call_metadata(),
        }

    def _call_metadata(self) -> tuple[tuple[str, str], ...]:
        if self._token is None:
            return self._metadata
        return (*self._metadata, ("authorization", f"Bearer {self._token.value()}"))
