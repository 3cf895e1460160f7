"""The schema registry's client on the driver (#46), against a small HTTP server on 127.0.0.1 that answers as
a registry does: basic auth sent, a schema fetched once per id and cached within its bound, an unknown id
answered as unknown, a server error retried then reported without the credentials, a refusal of the
credentials named; and Avro's schema resolution between writer and reader schemas."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest

from streaming_dq.config.source_model import RegistrySection
from streaming_dq.exceptions import ConfigError
from streaming_dq.sources.registry import RegistryClient, RegistryUnavailableError, resolves

PASSWORD = "s3cr3t-pw-77"
SCHEMA = {"type": "record", "name": "F", "fields": [{"name": "a", "type": "int"}]}


class _Registry(BaseHTTPRequestHandler):
    asked: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        _Registry.asked.append(self.path)
        import base64

        if (
            self.headers.get("Authorization")
            != "Basic " + base64.b64encode(f"gate:{PASSWORD}".encode()).decode()
        ):
            return self._answer(401, {"error_code": 401})
        if self.path == "/schemas/ids/1":
            return self._answer(200, {"schema": json.dumps(SCHEMA)})
        if self.path == "/schemas/ids/3":
            return self._answer(503, {"error_code": 503})
        if self.path == "/subjects/f-value/versions/latest":
            return self._answer(200, {"id": 1, "version": 4, "schema": json.dumps(SCHEMA)})
        return self._answer(404, {"error_code": 40403})

    def _answer(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Registry)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _Registry.asked.clear()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def client(url: str, password: str = PASSWORD, **settings: Any) -> RegistryClient:
    return RegistryClient(RegistrySection.model_validate(
        {"url": url, "basic-auth": {"user": "gate", "password": password}, "retries": 2, "timeout": 2, **settings}))  # fmt: skip


def test_a_schema_is_fetched_once_per_id_and_an_unknown_id_is_unknown(url: str) -> None:
    c = client(url)
    assert json.loads(c.writer_schema(1).text) == SCHEMA  # type: ignore[union-attr]
    assert c.writer_schema(1) is not None and c.writer_schema(2) is None and c.writer_schema(2) is None
    assert _Registry.asked == ["/schemas/ids/1", "/schemas/ids/2"] and c.requests == 2
    assert c.subject_schema("f-value", "latest").schema_id == 1


def test_the_cache_is_bounded(url: str) -> None:
    c = client(url, **{"cache-size": 1})
    c.writer_schema(1)
    c.writer_schema(2)  # pushes id 1 out
    c.writer_schema(1)
    assert _Registry.asked == ["/schemas/ids/1", "/schemas/ids/2", "/schemas/ids/1"]


def test_a_server_error_is_retried_then_reported_without_the_credentials(url: str) -> None:
    with pytest.raises(RegistryUnavailableError) as caught:
        client(url).writer_schema(3)
    assert _Registry.asked == ["/schemas/ids/3"] * 3  # the first try and 2 retries
    assert "HTTP 503" in str(caught.value) and PASSWORD not in str(caught.value)


def test_refused_credentials_are_a_config_error_that_shows_no_secret(url: str) -> None:
    with pytest.raises(ConfigError, match="refused the credentials") as caught:
        client(url, password="wrong-password-1").writer_schema(1)
    assert "wrong-password-1" not in str(caught.value) and len(_Registry.asked) == 1  # not retried


def test_avro_resolution_accepts_an_added_default_and_refuses_a_changed_type() -> None:
    v2 = {**SCHEMA, "fields": [*SCHEMA["fields"], {"name": "b", "type": ["null", "string"], "default": None}]}
    assert resolves(json.dumps(SCHEMA), json.dumps(v2)) is None  # an old message read as the new schema
    assert resolves(json.dumps(v2), json.dumps(SCHEMA)) is None  # a new one read as the old: b is dropped
    changed = {**SCHEMA, "fields": [{"name": "a", "type": "string"}]}
    assert resolves(json.dumps(SCHEMA), json.dumps(changed)) is not None
    required = {
        **SCHEMA,
        "fields": [*SCHEMA["fields"], {"name": "c", "type": "int"}],
    }  # added without a default
    assert resolves(json.dumps(SCHEMA), json.dumps(required)) is not None


def test_the_registry_settings_are_checked_before_spark_starts() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="basic-auth or bearer-token"):
        RegistrySection.model_validate(
            {"url": "http://r", "basic-auth": {"user": "u", "password": "p"}, "bearer-token": "t"}
        )
    with pytest.raises(ValidationError, match="cert-file and key-file"):
        RegistrySection.model_validate({"url": "http://r", "cert-file": "c.pem"})


def test_a_json_registry_payload_needs_a_schema_and_declares_the_registry_columns() -> None:
    from pydantic import ValidationError

    from streaming_dq.config.source_model import PayloadSection, SourceSection

    registry = {"url": "http://r"}
    with pytest.raises(ValidationError, match="needs a schema"):
        PayloadSection.model_validate({"format": "json-registry", "registry": registry})
    with pytest.raises(ValidationError, match="read with schema:, not avro-schema-file"):
        PayloadSection.model_validate(
            {"format": "json-registry", "schema": "a INT", "avro-schema-file": "a.avsc", "registry": registry}
        )
    source = SourceSection.model_validate({
        "format": "kafka", "bootstrap-servers": "h:1", "subscribe": "t",
        "value": {"format": "json-registry", "schema": "a INT", "registry": registry},
    })  # fmt: skip
    columns = source.columns()
    assert columns is not None and list(columns)[:1] == ["a"]
    assert columns["kafka_schema_id"] == "int" and columns["kafka_decode_error"] == "string"
    assert source.detects_unknown_fields  # undeclared keys are kept, as for plain JSON


def test_a_stream_failed_by_one_of_the_package_s_errors_says_so_in_its_one_line() -> None:
    """The job printed `the stream failed: An exception was raised by the Python Proxy. Return Message:
    Traceback ...` for a registry outage: the line picker knew only exceptions named ...Error or ...Exception
    (the registry's was RegistryUnavailable then); the package's own are picked whatever their name."""
    from streaming_dq.runtime.gate_run import first_line

    for name in ("RegistryUnavailableError", "RegistryDown"):
        text = (
            "An exception was raised by the Python Proxy. Return Message: Traceback (most recent call last):\n"
            '  File "gate.py", line 1, in __call__\n'
            "pyspark.errors.exceptions.captured.AnalysisException: not this one\n"
            f"streaming_dq.sources.registry.{name}: the schema registry at http://r/ids/1 did not answer\n"
        )
        assert (
            first_line(RuntimeError(text)) == f"{name}: the schema registry at http://r/ids/1 did not answer"
        )
