"""Serve a registry on ``/metrics`` from the driver, or push it once for jobs that end.

A streaming gate is a long-running driver process, so Prometheus pulls from it: :func:`serve_metrics` wraps
``prometheus_client.start_http_server`` (no hand-made HTTP server). :func:`push_metrics` is only for
``available-now`` runs that exit before a scrape could see their last values.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import TracebackType
from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry, pushadd_to_gateway, start_http_server

from streaming_dq.exceptions import ExporterError

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 9108


@dataclass
class MetricsServer:
    """A running ``/metrics`` endpoint; :meth:`close` stops it.

    Attributes:
        host: The address it listens on.
        port: The port it listens on (the one the OS chose when started with port 0).
    """

    host: str
    port: int
    _server: WSGIServer = field(repr=False)
    _thread: threading.Thread = field(repr=False)

    @property
    def url(self) -> str:
        """The metrics URL, e.g. ``http://127.0.0.1:9108/metrics``."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/metrics"

    def close(self, timeout: float = 5.0) -> None:
        """Stop serving and release the port; calling it twice is harmless.

        Args:
            timeout: Seconds to wait for the serving thread to finish.
        """
        if not self._thread.is_alive():
            return
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout)

    def __enter__(self) -> MetricsServer:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def serve_metrics(
    registry: CollectorRegistry, *, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT
) -> MetricsServer:
    """Serve ``registry`` over HTTP from a daemon thread.

    Args:
        registry: The gate's registry.
        host: The address to bind; keep loopback unless Prometheus scrapes from another host.
        port: The port to bind; 0 lets the OS choose (read it back from ``MetricsServer.port``).

    Returns:
        The running server.

    Raises:
        ExporterError: The address cannot be bound (port taken, unknown host, no permission).

    Example:
        >>> from prometheus_client import CollectorRegistry
        >>> with serve_metrics(CollectorRegistry(), port=0) as server:
        ...     server.url.startswith("http://127.0.0.1:")
        True
    """
    try:
        httpd, thread = start_http_server(port, addr=host, registry=registry)
    except OSError as error:
        reason = error.strerror or str(error)
        raise ExporterError(
            f"cannot serve Prometheus metrics on {host}:{port}: {reason}"
            " (is another process using the port? set metrics.prometheus.port to a free one)",
            host=host,
            port=port,
        ) from error
    return MetricsServer(host=host, port=httpd.server_port, _server=httpd, _thread=thread)


def push_metrics(
    registry: CollectorRegistry,
    gateway: str,
    job: str,
    grouping_key: Mapping[str, str] | None = None,
    *,
    timeout: float = 30.0,
) -> None:
    """Push ``registry`` to a Pushgateway once (``pushadd``: replaces only the pushed metric names).

    Only for jobs that end (``available-now`` runs): the Pushgateway never forgets a series, so a
    long-running stream must be scraped with :func:`serve_metrics` instead.

    Args:
        registry: The gate's registry.
        gateway: The Pushgateway address, e.g. ``http://pushgateway:9091``.
        job: The ``job`` label of the pushed group.
        grouping_key: Extra labels of the group, e.g. ``{"gate": "orders"}``.
        timeout: Seconds before the push gives up.

    Raises:
        ExporterError: The Pushgateway could not be reached or refused the push.

    Example:
        >>> gateway = "http://pushgateway:9091"
        >>> push_metrics(registry, gateway, "streaming_dq", {"gate": "orders"})  # doctest: +SKIP
    """
    try:
        pushadd_to_gateway(
            gateway, job=job, registry=registry, grouping_key=dict(grouping_key or {}), timeout=timeout
        )
    except OSError as error:
        raise ExporterError(
            f"cannot push metrics to the Pushgateway at {gateway} (job {job!r}): {error}"
        ) from error
