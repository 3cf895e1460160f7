"""The streaming checkpoint as the gate uses it: the query's identity, and a start that a crash left broken.

The query id is written to ``<checkpoint>/metadata`` (``{"id": "..."}``) when the query first starts and stays
the same across restarts on that checkpoint: :func:`read_query_id` reads it (under Spark Connect, where the
batch function has no SparkContext to ask).

Making a checkpoint that crashed before its first batch startable again:

Spark writes ``<checkpoint>/offsets/<batch id>`` through a hidden temporary file (``.0.<uuid>.tmp``, plus a
``..0.<uuid>.tmp.crc`` checksum on the local file system) that it renames into place. A process killed
during that write of batch 0 leaves the temporary file behind and no offset file. On restart Spark (4.x)
finds no batch in the offset log, insists that the folder be empty, and refuses to start with
``STATE_STORE_CHECKPOINT_LOCATION_NOT_EMPTY`` - for ever, until someone deletes the leftovers by hand.

No batch has been planned when the offset log holds no offset file, so nothing was written anywhere on its
behalf: the leftovers carry no information and are safe to delete. :func:`clear_unstarted_offsets` does only
that, only for a checkpoint on a local path, and logs what it removed. It never touches a folder that holds
an offset file or any file it does not recognise as an abandoned temporary file.
"""

from __future__ import annotations

import json
import logging
import re
from typing import TYPE_CHECKING

from streaming_dq.config.paths import local_path

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

_OFFSET_FILE = re.compile(r"\d+")
_LEFTOVER = re.compile(r"\.{1,2}\d+\.[0-9a-fA-F-]+\.tmp(\.crc)?")


QUERY_ID_PROPERTY = "sql.streaming.queryId"


class QueryIdentity:
    """A gate's idempotency app id: ``"<gate>:<streaming query id>"``, or the gate name outside a query.

    The query id is stored in the checkpoint: it survives restarts and changes with a new checkpoint, so batch
    ids restarting at 0 under a new checkpoint are never mistaken for replays. Classic Spark gives it to the
    batch as a local property; under Spark Connect (no SparkContext, and the batch function runs in a worker on
    the server) it is read from the checkpoint's ``metadata`` file (once). A direct call outside a stream
    (tests, a one-off backfill) in classic Spark uses the gate name: its batch ids must then increase.
    """

    def __init__(self, gate: str, checkpoint_location: str | None = None) -> None:
        self.gate = gate
        self.checkpoint_location = checkpoint_location
        self._query_id: str | None = None

    def use_checkpoint(self, location: str) -> None:
        """The stream's checkpoint (``QualityGate.start``); a different one forgets the query id read."""
        if location != self.checkpoint_location:
            self.checkpoint_location, self._query_id = location, None

    def app_id(self, spark: SparkSession) -> str:
        """The app id of the batch running now.

        Raises:
            ConfigError: Under Spark Connect without a known checkpoint (the id would be the bare gate name,
                and a second stream's batches would be taken for replays of the first's).
        """
        from streaming_dq.compat.spark import is_remote
        from streaming_dq.exceptions import ConfigError

        query_id = None
        if not is_remote():
            query_id = spark.sparkContext.getLocalProperty(QUERY_ID_PROPERTY)
        if not query_id and self.checkpoint_location is not None:
            if self._query_id is None:
                self._query_id = read_query_id(spark, self.checkpoint_location)
            query_id = self._query_id
        if not query_id and is_remote():
            raise ConfigError(
                "under Spark Connect the gate reads its streaming query's id from the checkpoint: start it with "
                "gate.start(stream, checkpoint_location=...) or pass checkpoint_location= to QualityGate",
                field_path="checkpoint",
            )
        return f"{self.gate}:{query_id}" if query_id else self.gate


def read_query_id(spark: SparkSession, location: str) -> str:
    """The streaming query id recorded in ``<location>/metadata``.

    A local checkpoint is read directly; any other (``s3://``, ``abfss://`` ...) through Spark, which knows the
    file system (one small job, once per gate and checkpoint).

    Raises:
        ConfigError: The checkpoint has no readable metadata (the query has not started on it).
    """
    from streaming_dq.exceptions import ConfigError

    path = local_path(location)
    try:
        if path is not None:
            text = (path / "metadata").read_text(encoding="utf-8").splitlines()[0]
        else:
            row = spark.read.text(f"{location.rstrip('/')}/metadata").first()
            text = row[0] if row is not None else ""
        query_id = json.loads(text)["id"]
    except Exception as exc:
        raise ConfigError(
            f"cannot read the streaming query id from {location}/metadata: {type(exc).__name__}: {exc}",
            field_path="checkpoint",
        ) from exc
    return str(query_id)


def clear_unstarted_offsets(checkpoint_location: str) -> list[str]:
    """Delete the temporary files a crash left in an offset log that holds no offset yet.

    Args:
        checkpoint_location: The streaming query's checkpoint location.

    Returns:
        The names of the files removed (empty when there was nothing to do, the offset log holds a batch,
        the folder holds a file that is not an abandoned temporary file, or the location is not local).
    """
    path = local_path(checkpoint_location)
    offsets = path / "offsets" if path is not None else None
    if offsets is None or not offsets.is_dir():
        return []
    names = sorted(entry.name for entry in offsets.iterdir())
    if any(_OFFSET_FILE.fullmatch(name) for name in names):
        return []
    if not names or not all(_LEFTOVER.fullmatch(name) for name in names):
        return []
    for name in names:
        (offsets / name).unlink()
    log.warning(
        "checkpoint %s: removed %d temporary file(s) a crash left in its offset log before batch 0 "
        "was planned (%s); Spark would otherwise refuse to start on it",
        checkpoint_location,
        len(names),
        ", ".join(names),
    )
    return names
