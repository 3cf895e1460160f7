"""serve_metrics / push_metrics over real loopback HTTP (no JVM)."""

from __future__ import annotations

import socket
import threading
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import ClassVar

import pytest
from prometheus_client import CollectorRegistry

from streaming_dq.core.outcome import BatchOutcome
from streaming_dq.exceptions import ExporterError, StreamingDQError
from streaming_dq.exporter import GateMetrics, MetricsServer, push_metrics, serve_metrics


@pytest.fixture
def registry() -> CollectorRegistry:
    registry = CollectorRegistry()
    metrics = GateMetrics("orders", registry=registry)
    metrics.record_batch(BatchOutcome(gate="orders", batch_id=0, status="committed", rows_passed=3))
    return registry


@pytest.fixture
def server(registry: CollectorRegistry) -> Iterator[MetricsServer]:
    server = serve_metrics(registry, port=0)
    yield server
    server.close()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_serves_the_registry_on_metrics(server: MetricsServer) -> None:
    with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/metrics", timeout=5) as response:
        status, content_type, body = (
            response.status,
            response.headers["Content-Type"],
            response.read().decode(),
        )

    assert (server.host, server.url) == ("127.0.0.1", f"http://127.0.0.1:{server.port}/metrics")
    assert server.port > 0
    assert status == 200
    assert content_type.startswith("text/plain")
    assert 'streaming_dq_rows_total{gate="orders",outcome="passed"} 3.0' in body.splitlines()
    assert "_created" not in body


def test_a_taken_port_is_a_clear_error(registry: CollectorRegistry, server: MetricsServer) -> None:
    with pytest.raises(
        ExporterError, match=rf"cannot serve Prometheus metrics on 127\.0\.0\.1:{server.port}: "
    ) as info:
        serve_metrics(registry, port=server.port)

    assert isinstance(info.value, StreamingDQError) and isinstance(info.value, OSError)
    assert isinstance(info.value.__cause__, OSError)


def test_close_releases_the_port(registry: CollectorRegistry) -> None:
    first = serve_metrics(registry, port=0)
    first.close()
    first.close()  # idempotent

    with serve_metrics(registry, port=first.port) as second:
        assert second.port == first.port
        with urllib.request.urlopen(second.url, timeout=5) as response:
            assert response.status == 200


class _Capture(BaseHTTPRequestHandler):
    requests: ClassVar[list[tuple[str, str, str]]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"])).decode()
        _Capture.requests.append((self.command, self.path, body))
        self.send_response(200)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def gateway() -> Iterator[str]:
    """A loopback HTTP endpoint that records what a Pushgateway client sends."""
    _Capture.requests = []
    httpd = HTTPServer(("127.0.0.1", 0), _Capture)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_port}"
    httpd.shutdown()
    httpd.server_close()


def test_push_adds_the_registry_to_its_group(registry: CollectorRegistry, gateway: str) -> None:
    push_metrics(registry, gateway, "streaming_dq", {"gate": "orders"})

    [(method, path, body)] = _Capture.requests
    assert (method, path) == ("POST", "/metrics/job/streaming_dq/gate/orders")
    assert 'streaming_dq_rows_total{gate="orders",outcome="passed"} 3.0' in body.splitlines()


def test_unreachable_gateway_is_a_clear_error(registry: CollectorRegistry) -> None:
    gateway = f"http://127.0.0.1:{free_port()}"

    with pytest.raises(
        ExporterError, match=rf"cannot push metrics to the Pushgateway at {gateway} \(job 'j'\)"
    ):
        push_metrics(registry, gateway, "j", timeout=2)
