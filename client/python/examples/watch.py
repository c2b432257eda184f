#!/usr/bin/env python3
"""Follows workload changes through workloadmapd, one line per event.

    python examples/watch.py --address 127.0.0.1:50051 -n ml

prints the snapshot (ADDED per workload, then SYNCED) and every change after
it, surviving disconnects and daemon restarts (RESET, then a new snapshot),
until interrupted; --until-synced stops after the snapshot.
"""

from __future__ import annotations

import argparse
import logging
import sys

import grpc

from workloadmap import Client, WatchEventType, default_address
from workloadmap.v1 import workload_pb2


def replicas(component: workload_pb2.Component) -> tuple[int, int]:
    """(ready, desired) over the components that have pods."""
    ready = desired = 0
    for instance in component.instances:
        if component.has_pod_definition:
            ready += instance.replicas.ready
            desired += instance.replicas.desired
        for child in instance.children:
            r, d = replicas(child)
            ready, desired = ready + r, desired + d
    return ready, desired


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--address", default=default_address(), help="HOST:PORT or unix:PATH (default: %(default)s)"
    )
    parser.add_argument("-n", "--namespace", default="", help="namespace (default: all)")
    parser.add_argument(
        "--kind", action="append", default=[], help="Kind, group/Kind or resource; repeatable"
    )
    parser.add_argument(
        "-l", "--selector", default="", help="label selector on the workload objects"
    )
    parser.add_argument("--until-synced", action="store_true", help="stop after the snapshot")
    parser.add_argument("-v", "--verbose", action="store_true", help="log reconnections")
    args = parser.parse_args()
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, format="%(message)s"
    )

    try:
        with (
            Client(args.address) as client,
            client.watch(args.namespace, kinds=args.kind, label_selector=args.selector) as watch,
        ):
            for event in watch:
                if event.workload is None:
                    print(f"{event.type.name:<8} revision {event.revision}", flush=True)
                else:
                    w = event.workload
                    status = w.status.phase or ",".join(w.status.matched_statuses)
                    ready = "{}/{}".format(*replicas(w.root))
                    ref = f"{w.ref.kind}/{w.ref.namespace}/{w.ref.name}"
                    print(
                        f"{event.type.name:<8} {ref}  {status}  replicas {ready} ready"
                        f"  revision {event.revision}",
                        flush=True,
                    )
                if args.until_synced and event.type == WatchEventType.SYNCED:
                    break
    except ValueError as error:
        parser.error(str(error))
    except grpc.RpcError as error:
        print(f"watch.py: {error.code().name}: {error.details()}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
