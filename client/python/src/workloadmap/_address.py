"""Daemon addresses: the syntax of workloadmapd --listen and wmctl --address."""

from __future__ import annotations

import dataclasses
import ipaddress
import os
import re

DEFAULT_ADDRESS = "127.0.0.1:50051"
ADDRESS_ENV = "WM_ADDRESS"

_HOST_LABEL = re.compile(r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?")


@dataclasses.dataclass(frozen=True)
class Address:
    """A parsed daemon address.

    Attributes:
        target: the gRPC target to dial (gRPC reads unix:PATH,
            unix:///ABS/PATH and HOST:PORT itself).
        unix: whether it is a Unix socket (always plaintext: the daemon
            serves TLS on TCP listeners only).
    """

    target: str
    unix: bool


def default_address() -> str:
    """$WM_ADDRESS if set and not empty, else 127.0.0.1:50051 (as wmctl)."""
    return os.environ.get(ADDRESS_ENV) or DEFAULT_ADDRESS


def parse_address(address: str) -> Address:
    """Checks a daemon address: HOST:PORT, unix:PATH or unix:///ABS/PATH.

    HOST is a host name, an IPv4 address or a bracketed IPv6 address
    ([::1]:50051); PORT is 1 to 65535.

    Raises:
        ValueError: the address is none of those forms; the message says why.
    """
    if address.startswith("unix://"):
        # gRPC's URI form: unix://host/... would be no path at all.
        path = address[len("unix://") :]
        if len(path) < 2 or not path.startswith("/"):
            raise _bad(
                address, "unix:// must be followed by an absolute path, as in unix:///run/wm.sock"
            )
        return Address(target=address, unix=True)
    if address.startswith("unix:"):
        if len(address) == len("unix:"):
            raise _bad(address, "unix: must be followed by a socket path")
        return Address(target=address, unix=True)
    host, colon, port = address.rpartition(":")
    if not colon:
        raise _bad(address, "missing :PORT")
    if not port.isdigit() or not 1 <= int(port) <= 65535:
        raise _bad(address, "port must be a number from 1 to 65535")
    _check_host(address, host)
    return Address(target=address, unix=False)


def _check_host(address: str, host: str) -> None:
    if not host:
        raise _bad(address, "missing host")
    if host.startswith("["):
        try:
            if not host.endswith("]"):
                raise ValueError(host)
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            raise _bad(address, "host in brackets must be an IPv6 address") from None
        return
    if ":" in host:
        raise _bad(address, "an IPv6 host must be bracketed, as in [::1]:PORT")
    if all(c.isdigit() or c == "." for c in host):
        try:
            ipaddress.IPv4Address(host)
        except ValueError:
            raise _bad(address, "host is not a valid IPv4 address") from None
        return
    name = host.removesuffix(".")
    if len(name) > 253 or not all(_HOST_LABEL.fullmatch(label) for label in name.split(".")):
        raise _bad(address, "host must be a host name, IPv4 or [IPv6] address")


def _bad(address: str, why: str) -> ValueError:
    return ValueError(f'bad daemon address "{address}": {why} (expected HOST:PORT or unix:PATH)')
