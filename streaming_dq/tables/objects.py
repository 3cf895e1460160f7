"""A client of the object store a location lives on (``obstore``, the ``object_store`` crate delta-rs uses), for
what Delta's writers do not do: a lease object written by conditional writes (:mod:`streaming_dq.sink.lease`),
and reading or conditionally creating a table's log files (:mod:`streaming_dq.maintenance.doctor`).

The storage options are those of the config, in delta-rs's spelling (:mod:`streaming_dq.tables.storage`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from streaming_dq.exceptions import StreamingDQError
from streaming_dq.tables.storage import mask
from streaming_dq.tables.targets import is_local_uri

__all__ = ["object_store"]


def object_store(location: str, options: Mapping[str, str]) -> Any:
    """A store rooted at ``location`` (a local path, ``file:``, ``s3://``, ``s3a://``, ``az://``, ``abfss://``,
    ``gs://``); S3 with create-if-absent and replace-by-ETag writes.

    Raises:
        StreamingDQError: the store cannot be opened (the reason with every secret masked).
    """
    from obstore.store import LocalStore, from_url

    if is_local_uri(location):
        path = Path(location.removeprefix("file://"))
        path.mkdir(parents=True, exist_ok=True)
        return LocalStore(str(path.resolve()))
    config: dict[str, str] = {}
    client: dict[str, Any] = {}
    for key, value in options.items():
        k = key.lower()
        if k.startswith(("fs.", "spark.")):
            continue
        if k in ("aws_allow_http", "allow_http", "azure_allow_http"):
            client["allow_http"] = value.lower() == "true"
        else:
            config[k] = value
    scheme, _, rest = location.partition("://")
    url = f"s3://{rest}" if scheme.lower() in ("s3", "s3a") else location
    if url.startswith("s3://"):
        config.setdefault("aws_conditional_put", "etag")  # create-if-absent and replace-by-ETag on S3
    try:
        return from_url(url.rstrip("/") + "/", config=config, client_options=client)  # type: ignore[call-overload]
    except Exception as exc:
        raise StreamingDQError(f"{location}: cannot open its store: {mask(str(exc), options)}") from exc
