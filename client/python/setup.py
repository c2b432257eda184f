"""Build hook: generates the workloadmap.v1 modules with grpcio-tools.

The generated code is not committed: every build (wheel, editable install)
runs protoc from the pinned grpcio-tools over the repository's protos, so the
stubs always match proto/ and the runtime versions in pyproject.toml. An sdist
carries a copy of the protos (see Sdist), since it is built elsewhere.
"""

from __future__ import annotations

import importlib.resources
import pathlib
import shutil

from setuptools import Command, setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

HERE = pathlib.Path(__file__).resolve().parent
# Proto paths relative to the proto root. They double as import paths: protoc
# names modules after them (workloadmap/v1/service.proto imports
# "workloadmap/v1/workload.proto", generated as
# `from workloadmap.v1 import workload_pb2`), which is why the root is the
# directory holding workloadmap/ and the output root is the one holding the
# workloadmap package.
PROTOS = ("workloadmap/v1/workload.proto", "workloadmap/v1/service.proto")
SERVICE_PROTOS = ("workloadmap/v1/service.proto",)


def proto_root() -> pathlib.Path:
    """The sdist's copy of the protos, else the repository's proto/."""
    for root in (HERE / "proto", HERE.parent.parent / "proto"):
        if all((root / p).is_file() for p in PROTOS):
            return root
    raise RuntimeError(
        f"workloadmap protos not found in {HERE / 'proto'} nor {HERE.parent.parent / 'proto'}"
    )


def generated_files(out_root: pathlib.Path) -> list[pathlib.Path]:
    files = []
    for proto in PROTOS:
        stem = out_root / proto.removesuffix(".proto")
        files += [stem.with_name(stem.name + "_pb2.py"), stem.with_name(stem.name + "_pb2.pyi")]
    for proto in SERVICE_PROTOS:
        stem = out_root / proto.removesuffix(".proto")
        files.append(stem.with_name(stem.name + "_pb2_grpc.py"))
    return files


def run_protoc(out_root: pathlib.Path) -> None:
    # Imported here: only a build needs grpcio-tools (a build requirement).
    from grpc_tools import protoc

    root = proto_root()
    # grpc_tools' copy of the well-known types (google/protobuf/struct.proto).
    well_known = importlib.resources.files("grpc_tools") / "_proto"
    common = ["grpc_tools.protoc", f"-I{root}", f"-I{well_known}"]
    calls = [
        [f"--python_out={out_root}", f"--pyi_out={out_root}", *(str(root / p) for p in PROTOS)],
        # Only service.proto has a service; workload.proto would get an empty
        # *_pb2_grpc module.
        [f"--grpc_python_out={out_root}", *(str(root / p) for p in SERVICE_PROTOS)],
    ]
    for args in calls:
        if protoc.main(common + args) != 0:
            raise RuntimeError(f"protoc failed: {' '.join(common + args)}")


class BuildPy(build_py):
    """build_py that also generates the stubs.

    In editable mode the package is imported from src/, so the stubs are
    written there (they are git-ignored); otherwise into build_lib, from which
    the wheel is made.
    """

    def run(self) -> None:
        super().run()
        out_root = self._out_root()
        run_protoc(out_root)
        missing = [str(f) for f in generated_files(out_root) if not f.is_file()]
        if missing:
            raise RuntimeError(f"protoc did not write {missing}")

    def _out_root(self) -> pathlib.Path:
        if self.editable_mode:
            return HERE / "src"
        return pathlib.Path(self.build_lib)

    # The generated files are outputs of this command (install --record,
    # strict editable installs); in editable mode they live in src/ beside
    # the package's own modules instead.
    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        outputs = super().get_outputs(include_bytecode)
        if self.editable_mode:
            return outputs
        return outputs + [str(f) for f in generated_files(pathlib.Path(self.build_lib))]

    def get_output_mapping(self) -> dict[str, str]:
        mapping = super().get_output_mapping()
        if self.editable_mode:
            return mapping
        root = proto_root()
        for f in generated_files(pathlib.Path(self.build_lib)):
            proto = f.name.split("_pb2")[0] + ".proto"
            mapping[str(f)] = str(root / "workloadmap" / "v1" / proto)
        return mapping


class Sdist(sdist):
    """sdist that carries the protos, for builds away from the repository.

    Stubs an editable install left in src/ stay out: the sdist's own build
    generates them.
    """

    def make_release_tree(self, base_dir: str, files: list[str]) -> None:
        generated = {f.relative_to(HERE).as_posix() for f in generated_files(HERE / "src")}
        files = [f for f in files if pathlib.PurePath(f).as_posix() not in generated]
        super().make_release_tree(base_dir, files)
        root = proto_root()
        for proto in PROTOS:
            target = pathlib.Path(base_dir) / "proto" / proto
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(root / proto, target)


cmdclass: dict[str, type[Command]] = {"build_py": BuildPy, "sdist": Sdist}
setup(cmdclass=cmdclass)
