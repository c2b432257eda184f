"""The bearer token a Client sends to a daemon that authenticates callers."""

from __future__ import annotations

import os
import threading

# Where the kubelet mounts a pod's ServiceAccount token. A token projected for
# the daemon's audience (a serviceAccountToken volume with audience
# "workloadmap") is better: it is good for the daemon only.
SERVICE_ACCOUNT_TOKEN_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/token"


class BearerToken:
    """A token given as is, or read from a file and re-read when it changes."""

    def __init__(self, token: str | None, token_file: str | os.PathLike[str] | None) -> None:
        self._token = token
        self._file = os.fspath(token_file) if token_file is not None else None
        self._lock = threading.Lock()
        self._stamp: tuple[int, int] | None = None
        self._read = ""

    def value(self) -> str:
        """The token to send now.

        Raises:
            OSError: the token file cannot be read.
            ValueError: the token file is empty.
        """
        if self._file is None:
            return self._token or ""
        info = os.stat(self._file)
        stamp = (info.st_mtime_ns, info.st_size)
        with self._lock:
            if stamp != self._stamp:
                with open(self._file, encoding="utf-8") as f:
                    token = f.read().strip()
                if not token:
                    raise ValueError(f"token file {self._file} is empty")
                self._read, self._stamp = token, stamp
            return self._read
