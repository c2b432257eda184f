#!/usr/bin/env python3
"""Resolves one workload through workloadmapd and prints its components.

    python examples/resolve.py --address 127.0.0.1:50051 -n ml jobset/demo

prints the phase, and per pod-bearing component (a JobSet's replicated jobs)
the desired, current and ready replicas and the GPUs at desired scale.
Exit codes as wmctl's: 0 ok, 1 error, 3 not found.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator

import grpc

from workloadmap import Client, default_address
from workloadmap.v1 import workload_pb2


def gpus(resources: workload_pb2.ResourceList) -> int:
    """nvidia.com/gpu and any other */gpu resource, as the daemon counts them."""
    return sum(v for k, v in resources.quantities.items() if k.endswith("/gpu"))


def rows(component: workload_pb2.Component) -> Iterator[tuple[str, workload_pb2.ComponentInstance]]:
    """One row per instance of each component that has pods, top-down."""
    for instance in component.instances:
        if component.has_pod_definition:
            yield instance.id or component.name, instance
        for child in instance.children:
            yield from rows(child)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--address", default=default_address(), help="HOST:PORT or unix:PATH (default: %(default)s)"
    )
    parser.add_argument("-n", "--namespace", default="default")
    parser.add_argument("--cluster", default="", help="kubeconfig context of the cluster")
    parser.add_argument("workload", help="TYPE/NAME, e.g. jobset/demo or JobSet/demo")
    args = parser.parse_args()

    try:
        with Client(args.address) as client:
            response = client.resolve(args.namespace, args.workload, cluster=args.cluster)
    except ValueError as error:
        parser.error(str(error))
    except grpc.RpcError as error:
        print(f"resolve.py: {error.code().name}: {error.details()}", file=sys.stderr)
        return 3 if error.code() == grpc.StatusCode.NOT_FOUND else 1

    workload = response.workload
    ref = workload.ref
    definition = workload.definition
    print(
        f"{ref.kind}/{ref.name}  namespace: {ref.namespace}  "
        f"definition: {definition.name} ({definition.origin})  revision: {response.revision}"
    )
    status = workload.status
    print(f"Phase: {status.phase or ', '.join(status.matched_statuses) or 'Unknown'}")
    print()
    table = [("COMPONENT", "DESIRED", "CURRENT", "READY", "GPUS")]
    total = [0, 0, 0]
    for name, instance in rows(workload.root):
        r = instance.replicas
        table.append(
            (name, str(r.desired), str(r.current), str(r.ready), str(gpus(instance.resources)))
        )
        total = [total[0] + r.desired, total[1] + r.current, total[2] + r.ready]
    table.append(("TOTAL", *(str(t) for t in total), str(gpus(workload.resources))))
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    for row in table:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
