"""An Azure Blob Storage server on 127.0.0.1 for the object-store tests: Azurite's blob service.

Why this server: Microsoft's own emulator, ``azurite`` on npm (``make test`` installs it into ``.tools/``; no
Docker, no binary download), a separate process that speaks the Blob HTTP API, checks Shared Key signatures
and honours the conditional headers (``If-None-Match: *``) a Delta commit on Azure relies on. delta-rs talks to
it with ``AZURE_STORAGE_USE_EMULATOR`` and finds it at ``AZURITE_BLOB_STORAGE_URL`` (an environment variable
only: :func:`local_azure` sets it for its block, and a job started inside inherits it). It keeps its data
under the work folder.

Example:
    >>> with local_azure(Path("/tmp/azure"), containers=("lake",)) as azure:  # doctest: +SKIP
    ...     write_deltalake("az://lake/orders", table, storage_options=azure.storage_options())
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import shutil
import subprocess
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from streaming_dq.devtools.local_kafka import free_port, stop_group, wait_for_port
from streaming_dq.exceptions import LocalServerError

__all__ = ["AzureServer", "local_azure"]

#: Azurite's one account and its published key (the emulator's, not a secret anywhere).
ACCOUNT = "devstoreaccount1"
ACCOUNT_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
_API_VERSION = "2021-12-02"
#: Where ``make test`` installs it.
TOOLS = Path(__file__).resolve().parents[2] / ".tools" / "node_modules" / ".bin"


@dataclass(frozen=True)
class AzureServer:
    """A running Azurite blob service.

    Attributes:
        url: ``http://127.0.0.1:<port>`` (what ``AZURITE_BLOB_STORAGE_URL`` says).
        account: The storage account name.
        key: Its Shared Key.
    """

    url: str
    account: str = ACCOUNT
    key: str = field(default=ACCOUNT_KEY, repr=False)

    def storage_options(self, **extra: str) -> dict[str, str]:
        """delta-rs storage options for this server (tables as ``az://<container>/<path>``)."""
        return {
            "AZURE_STORAGE_USE_EMULATOR": "true",
            "AZURE_STORAGE_ACCOUNT_NAME": self.account,
            "AZURE_STORAGE_ACCOUNT_KEY": self.key,
            **extra,
        }

    def create_container(self, name: str) -> None:
        """Create container ``name`` (one Shared Key signed request; delta-rs creates none)."""
        date = datetime.now(UTC).strftime("%a, %d %b %Y %H:%M:%S GMT")
        headers = {"x-ms-date": date, "x-ms-version": _API_VERSION}
        canonical = "".join(f"{k}:{v}\n" for k, v in sorted(headers.items()))
        signed = "PUT\n" + "\n" * 11 + canonical + f"/{self.account}/{self.account}/{name}\nrestype:container"
        digest = hmac.new(base64.b64decode(self.key), signed.encode(), hashlib.sha256).digest()
        headers["Authorization"] = f"SharedKey {self.account}:{base64.b64encode(digest).decode()}"
        request = urllib.request.Request(
            f"{self.url}/{self.account}/{name}?restype=container",
            method="PUT",
            headers={**headers, "Content-Length": "0"},
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            if answer.status != 201:
                raise LocalServerError(f"Azurite answered {answer.status} to creating container {name!r}")


def _azurite() -> str:
    found = shutil.which("azurite-blob", path=str(TOOLS)) or shutil.which("azurite-blob")
    if found is None:
        raise LocalServerError("azurite is not installed: `make test` installs it (npm) into .tools/")
    return found


@contextmanager
def local_azure(
    workdir: Path, *, containers: tuple[str, ...] = ("lake",), timeout: float = 60.0
) -> Iterator[AzureServer]:
    """Run Azurite's blob service on a free port of 127.0.0.1 (data and log under ``workdir``) with
    ``containers`` created, and ``AZURITE_BLOB_STORAGE_URL`` pointing at it for the block.

    Raises:
        LocalServerError: Azurite is not installed, exited, or did not answer within ``timeout``.
    """
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log = workdir / "azurite.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [_azurite(), "--blobHost", "127.0.0.1", "--blobPort", str(port), "--location", str(workdir / "data"),
             "--skipApiVersionCheck"],
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    before = os.environ.get("AZURITE_BLOB_STORAGE_URL")
    try:
        wait_for_port("azurite", port, process, log, timeout)
        server = AzureServer(f"http://127.0.0.1:{port}")
        for name in containers:
            server.create_container(name)
        os.environ["AZURITE_BLOB_STORAGE_URL"] = server.url
        yield server
    finally:
        if before is None:
            os.environ.pop("AZURITE_BLOB_STORAGE_URL", None)
        else:
            os.environ["AZURITE_BLOB_STORAGE_URL"] = before
        stop_group(process)
