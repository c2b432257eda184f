"""The stubs the build generated.

They import each other by package path, come with .pyi files, and the runtime
requirements the package declares cover them.
"""

import importlib.metadata
import pathlib
import re

from workloadmap.v1 import service_pb2, service_pb2_grpc, workload_pb2


def lower_bound(package: str) -> tuple[int, ...]:
    """The X of `package>=X` among the installed workloadmap's requirements."""
    for requirement in importlib.metadata.requires("workloadmap") or ():
        name, specifiers = re.match(r"([A-Za-z0-9_.-]+)\s*([^;]*)", requirement).groups()
        minimum = re.search(r">=\s*([0-9.]+)", specifiers)
        if name == package and minimum:
            return version(minimum.group(1))
    raise AssertionError(f"workloadmap declares no {package}>= requirement")


def version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))


def test_imports_and_stubs() -> None:
    # service_pb2 imports workload_pb2 as workloadmap.v1.workload_pb2: the
    # proto root matched the package layout.
    assert service_pb2.ResolveWorkloadResponse.DESCRIPTOR.fields_by_name[
        "workload"
    ].message_type is (workload_pb2.ResolvedWorkload.DESCRIPTOR)
    assert hasattr(service_pb2_grpc, "WorkloadMapStub")
    here = pathlib.Path(service_pb2.__file__).parent
    assert (here / "service_pb2.pyi").is_file() and (here / "workload_pb2.pyi").is_file()


def test_requirements_cover_the_generated_code() -> None:
    # The gencode refuses an older runtime at import; the declared minimums
    # must be what it was generated for, so pip never installs one it refuses.
    header = pathlib.Path(service_pb2.__file__).read_text()
    gencode = re.search(r"^# Protobuf Python Version: ([0-9.]+)$", header, re.M)
    assert gencode, "no gencode version in service_pb2.py"
    assert lower_bound("protobuf") == version(gencode.group(1))
    assert lower_bound("grpcio") == version(service_pb2_grpc.GRPC_GENERATED_VERSION)
