"""Python client of workloadmapd, the Workload Map resolution service.

    from workloadmap import Client

    with Client("127.0.0.1:50051") as client:
        print(client.resolve("default", "jobset/demo").workload.status)

The generated API is in workloadmap.v1 (service_pb2, workload_pb2,
service_pb2_grpc); Client wraps the common calls.
"""

from workloadmap._address import Address, default_address, parse_address
from workloadmap._token import SERVICE_ACCOUNT_TOKEN_FILE
from workloadmap._watch import Backoff, Watch, WatchEvent, WatchEventType
from workloadmap.client import DEFAULT_OPTIONS, SERVICE_NAME, Client, object_ref

__all__ = [
    "DEFAULT_OPTIONS",
    "SERVICE_ACCOUNT_TOKEN_FILE",
    "SERVICE_NAME",
    "Address",
    "Backoff",
    "Client",
    "Watch",
    "WatchEvent",
    "WatchEventType",
    "default_address",
    "object_ref",
    "parse_address",
]
__version__ = "0.1.0"
