"""The gate's lineage as a listener of its outcome feed: an OpenLineage event per committed batch, per final
window verdict and per failed batch (:mod:`.events`), sent by ``openlineage-python``'s client through the
transport the config names (``lineage.transport``: file, http, kafka or console).

Events leave after what they report is committed, so a receiver that is down never fails or replays a batch:
the event is lost for that receiver, the error is logged by the feed (``outcome callback failed``) and counted
here (:attr:`LineageListener.failed`). The HTTP transport's own retries apply first. The API key goes into the
client's configuration only: never into a log line or an error of ours.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from streaming_dq.core.listeners import OutcomeListener
from streaming_dq.core.outcome import BatchOutcome, WindowOutcome
from streaming_dq.exceptions import ConfigError

if TYPE_CHECKING:
    from openlineage.client import OpenLineageClient
    from openlineage.client.event_v2 import RunEvent

    from streaming_dq.config.gate_config import GateConfig
    from streaming_dq.config.sections import LineageTransportSection
    from streaming_dq.lineage.events import Datasets

__all__ = ["LineageListener", "gate_datasets", "transport_config"]


def transport_config(transport: LineageTransportSection) -> dict[str, Any]:
    """The client's ``transport`` configuration for ``lineage.transport``."""
    if transport.type == "file":
        return {"type": "file", "log_file_path": transport.path, "append": True}
    if transport.type == "http":
        out: dict[str, Any] = {"type": "http", "url": transport.url, "endpoint": transport.endpoint,
                               "timeout": transport.timeout}  # fmt: skip
        if transport.api_key is not None:
            out["auth"] = {"type": "api_key", "apiKey": transport.api_key}
        # the client's own retry settings (merged over its defaults): attempts on refused connections, read
        # errors and 5xx answers, backing off
        n = transport.retries
        out["retry"] = {"total": n, "read": n, "connect": n}
        return out
    if transport.type == "kafka":
        return {"type": "kafka", "topic": transport.topic, "config": dict(transport.config), "flush": True}
    return {"type": "console"}


def gate_datasets(config: GateConfig) -> Datasets:
    """The gate's input and outputs as OpenLineage datasets."""
    from streaming_dq.lineage.events import Datasets, dataset_name

    source = config.source
    if source.format == "kafka":
        named = dataset_name(
            "", topic=source.subscribe or source.subscribe_pattern, servers=source.bootstrap_servers
        )
    else:
        named = dataset_name(source.path or source.format)
    return Datasets(
        named, dataset_name(config.table("pass").uri), dataset_name(config.table("quarantine").uri)
    )


class LineageListener(OutcomeListener):
    """Sends a gate's events (see the module).

    Args:
        config: The gate's config, with a ``lineage`` section.
        client: The client to send with (default: one built from ``lineage.transport``).
    """

    def __init__(self, config: GateConfig, client: OpenLineageClient | None = None) -> None:
        section = config.lineage
        if section is None:
            raise ConfigError("no lineage section", field_path="lineage")
        self.gate = config.gate.name
        self.namespace = section.namespace
        self.windows = section.windows
        self.fail_levels = [level.value for level in config.fail_levels]
        self.datasets = gate_datasets(config)
        if client is None:
            try:
                from openlineage.client import OpenLineageClient
            except ImportError:
                raise ConfigError(
                    "lineage needs openlineage-python: pip install 'streaming-dq[lineage]'",
                    field_path="lineage",
                ) from None
            client = OpenLineageClient(config={"transport": transport_config(section.transport)})
        self.client = client
        self.sent = 0
        self.failed = 0

    def _emit(self, event: RunEvent) -> None:
        try:
            self.client.emit(event)
        except Exception:
            self.failed += 1
            raise  # the feed logs it with the gate and the event; the batch stays committed
        self.sent += 1

    def record_batch(self, outcome: BatchOutcome) -> None:
        from streaming_dq.lineage.events import batch_event, new_run_id

        if outcome.status != "committed":
            return  # a replay already committed: its event left with the first run
        run_id = new_run_id()
        self._emit(batch_event(outcome, namespace=self.namespace, datasets=self.datasets,
                               fail_levels=self.fail_levels, run_id=run_id))  # fmt: skip
        self._windows(outcome.windows, parent=run_id)

    def record_windows(self, windows: Sequence[WindowOutcome]) -> None:
        self._windows(windows, parent=None)

    def _windows(self, windows: Sequence[WindowOutcome], *, parent: str | None) -> None:
        from streaming_dq.lineage.events import window_event

        if not self.windows:
            return
        for window in windows:
            if window.status != "provisional":  # an open window is judged again; its final verdict is sent
                self._emit(window_event(window, gate=self.gate, namespace=self.namespace, parent=parent))

    def record_failure(self, batch_id: int, error: BaseException) -> None:
        from streaming_dq.lineage.events import failure_event

        self._emit(failure_event(self.gate, batch_id, error, namespace=self.namespace))

    def close(self) -> None:
        """Wait for the transport to send what it holds."""
        self.client.close(timeout=10.0)
