"""The one way a one-off command (``metrics``, ``maintain``, ``doctor``, ``release``, ``quarantine``, ``sql``)
opens a gate's tables: the config's catalog table names answered as ``run`` answers them, in a session built
from its ``spark:`` section, started only when the command needs Spark or the config names tables (#42).

Starting Spark takes 10-20 s here: the command says so on stderr first (off with ``--quiet``), so a long step
is never silent.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape

from streaming_dq.exceptions import InternalError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from streaming_dq.config.gate_config import GateConfig

__all__ = ["OpenedGate", "Progress", "opened_gate"]


@dataclass(frozen=True)
class Progress:
    """Progress lines of a long step, on stderr; ``quiet`` turns them off."""

    quiet: bool = False

    def say(self, text: str) -> None:
        if not self.quiet:
            Console(stderr=True, highlight=False, soft_wrap=True).print(escape(text), style="dim")


@dataclass(frozen=True)
class OpenedGate:
    """A gate's config with its catalog names looked up, and the session (None when none was needed)."""

    config: GateConfig
    session: SparkSession | None

    def require_session(self) -> SparkSession:
        if self.session is None:  # opened_gate(..., spark=True) always has one
            raise InternalError("this command opened the gate without Spark")
        return self.session


@contextmanager
def opened_gate(
    config: GateConfig,
    what: str,
    *,
    spark: bool = False,
    writer: str | None = None,
    progress: Progress | None = None,
    resolve: bool = True,
) -> Iterator[OpenedGate]:
    """``config`` with its catalog table names answered by the session's catalog, as ``run`` answers them.

    A session is started when ``spark`` is true or the config names catalog tables (one already active is
    used and left running); the one started here is stopped on the way out, however the block ends. Without
    ``resolve`` the names are left as names (``sql``: its ``CREATE SCHEMA`` comes before the tables exist).

    Raises:
        ConfigError: a catalog name the catalog does not know (one line per field).
    """
    from streaming_dq.config.catalog import resolve_catalog_tables
    from streaming_dq.runtime.session import config_session

    if not spark and not config.catalog_pending:
        yield OpenedGate(config, None)
        return
    where = (
        f"Spark Connect at {config.spark.remote}" if config.spark.remote else f"Spark ({config.spark.master})"
    )
    (progress or Progress()).say(f"{config.gate.name}: starting {where} for {what} ...")
    session, created = config_session(
        config, app_name=f"streaming-dq-{what}-{config.gate.name}", writer=writer
    )
    try:
        yield OpenedGate(resolve_catalog_tables(config, session) if resolve else config, session)
    finally:
        if created:
            session.stop()
