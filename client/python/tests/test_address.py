"""Address and reference syntax: the same rules as workloadmapd and wmctl."""

import grpc
import pytest

from workloadmap import Client, default_address, object_ref, parse_address


@pytest.mark.parametrize(
    ("address", "unix"),
    [
        ("127.0.0.1:50051", False),
        ("localhost:1", False),
        ("wm.example.com:65535", False),
        ("wm.example.com.:443", False),
        ("[::1]:50051", False),
        ("unix:/run/wm.sock", True),
        ("unix:relative/wm.sock", True),
        ("unix:///run/wm.sock", True),
    ],
)
def test_accepts(address: str, unix: bool) -> None:
    parsed = parse_address(address)
    assert parsed.target == address
    assert parsed.unix == unix


@pytest.mark.parametrize(
    ("address", "why"),
    [
        ("", "missing :PORT"),
        ("localhost", "missing :PORT"),
        (":50051", "missing host"),
        ("localhost:0", "port must be a number from 1 to 65535"),
        ("localhost:65536", "port must be a number from 1 to 65535"),
        ("localhost:http", "port must be a number from 1 to 65535"),
        ("::1:50051", "an IPv6 host must be bracketed"),
        ("[::g]:50051", "host in brackets must be an IPv6 address"),
        ("[::1:50051", "host in brackets must be an IPv6 address"),
        ("300.1.1.1:50051", "host is not a valid IPv4 address"),
        ("under_score:50051", "host must be a host name"),
        ("-dash.example:50051", "host must be a host name"),
        ("unix:", "unix: must be followed by a socket path"),
        ("unix://run/wm.sock", "unix:// must be followed by an absolute path"),
        ("unix:///", "unix:// must be followed by an absolute path"),
    ],
)
def test_rejects(address: str, why: str) -> None:
    with pytest.raises(ValueError, match=why) as raised:
        parse_address(address)
    assert f'"{address}"' in str(raised.value)


def test_default_address(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WM_ADDRESS", raising=False)
    assert default_address() == "127.0.0.1:50051"
    monkeypatch.setenv("WM_ADDRESS", "")
    assert default_address() == "127.0.0.1:50051"
    monkeypatch.setenv("WM_ADDRESS", "unix:/run/wm.sock")
    assert default_address() == "unix:/run/wm.sock"
    with Client() as client:
        assert client.address == "unix:/run/wm.sock"


def test_client_rejects_bad_address_and_tls_over_unix() -> None:
    with pytest.raises(ValueError, match="missing :PORT"):
        Client("localhost")
    with pytest.raises(ValueError, match="Unix sockets are plaintext"):
        Client("unix:/run/wm.sock", credentials=grpc.ssl_channel_credentials())


def test_object_ref_kind_resource_group() -> None:
    ref = object_ref("ml", "JobSet", "demo")
    assert (ref.namespace, ref.kind, ref.resource, ref.group, ref.name) == (
        "ml",
        "JobSet",
        "",
        "",
        "demo",
    )
    ref = object_ref("ml", "jobsets.jobset.x-k8s.io/demo", cluster="prod")
    assert (ref.kind, ref.resource, ref.group, ref.name, ref.cluster) == (
        "",
        "jobsets",
        "jobset.x-k8s.io",
        "demo",
        "prod",
    )
    ref = object_ref("ml", "PyTorchJob.kubeflow.org", "train")
    assert (ref.kind, ref.group) == ("PyTorchJob", "kubeflow.org")


@pytest.mark.parametrize(
    ("type_", "name"), [("", "demo"), ("jobset", ""), ("jobset/", ""), ("/demo", "")]
)
def test_object_ref_needs_type_and_name(type_: str, name: str) -> None:
    with pytest.raises(ValueError, match="needs TYPE and NAME"):
        object_ref("ml", type_, name)
