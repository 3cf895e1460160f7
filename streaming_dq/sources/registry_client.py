"""A schema registry's Confluent-compatible API on the driver (Apicurio's ``ccompat`` API speaks it too):
writer schemas fetched once per id (cached, bounded, with a timeout, retries and backing off; basic auth or a
bearer token; TLS), a subject's version, and whether Avro written with one schema reads as another.
:mod:`~streaming_dq.sources.registry` decodes the messages with them.
"""

from __future__ import annotations

import base64
import io
import json
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from streaming_dq.exceptions import ConfigError, StreamingDQError

if TYPE_CHECKING:
    from streaming_dq.config.source_model import RegistrySection

__all__ = ["RegistryClient", "RegistryUnavailableError", "WriterSchema", "resolves"]


class RegistryUnavailableError(StreamingDQError, RuntimeError):
    """The registry could not be reached or answered with a server error, after the retries."""


@dataclass(frozen=True)
class WriterSchema:
    """A writer schema the registry gave for an id."""

    schema_id: int
    text: str
    schema_type: str


class RegistryClient:
    """The registry's Confluent-compatible API, on the driver (see the module).

    Attributes:
        requests: HTTP requests made so far (a batch whose ids are all cached makes none).
    """

    def __init__(self, settings: RegistrySection) -> None:
        self.settings = settings
        self.base = settings.url.rstrip("/")
        self.requests = 0
        self._cache: OrderedDict[int, WriterSchema | None] = OrderedDict()
        self._headers = {"Accept": "application/vnd.schemaregistry.v1+json, application/json"}
        if settings.basic_auth is not None:
            pair = f"{settings.basic_auth.user}:{settings.basic_auth.password}".encode()
            self._headers["Authorization"] = "Basic " + base64.b64encode(pair).decode()
        elif settings.bearer_token is not None:
            self._headers["Authorization"] = f"Bearer {settings.bearer_token}"
        self._context: ssl.SSLContext | None = None
        if settings.ca_file or settings.cert_file:
            self._context = ssl.create_default_context(cafile=settings.ca_file)
            if settings.cert_file:
                self._context.load_cert_chain(settings.cert_file, settings.key_file)

    def _get(self, path: str) -> Any | None:
        """The JSON at ``path``; None for a 404 (an unknown id or subject).

        Raises:
            RegistryUnavailableError: no answer, or a 5xx, after ``retries`` retries (the message names the URL
                and the status, never the credentials).
        """
        url = f"{self.base}{path}"
        last = ""
        for attempt in range(self.settings.retries + 1):
            if attempt:
                time.sleep(min(0.5 * 2 ** (attempt - 1), 10.0))
            self.requests += 1
            request = urllib.request.Request(url, headers=self._headers)
            try:
                with urllib.request.urlopen(
                    request, timeout=self.settings.timeout, context=self._context
                ) as answer:
                    return json.loads(answer.read())
            except urllib.error.HTTPError as exc:
                if exc.code == 404:
                    return None
                if exc.code in (401, 403):
                    raise ConfigError(f"the schema registry refused the credentials ({exc.code}) for {url}",
                                      field_path="source.value.registry") from None  # fmt: skip
                last = f"HTTP {exc.code}"
                if exc.code < 500:
                    break
            except (urllib.error.URLError, OSError, TimeoutError) as exc:
                last = str(getattr(exc, "reason", exc))
        raise RegistryUnavailableError(f"the schema registry at {url} did not answer: {last}")

    def writer_schema(self, schema_id: int) -> WriterSchema | None:
        """The schema registered under ``schema_id`` (None: the registry does not know it); cached."""
        if schema_id in self._cache:
            self._cache.move_to_end(schema_id)
            return self._cache[schema_id]
        found = self._get(f"/schemas/ids/{schema_id}")
        schema = None
        if found is not None:
            schema = WriterSchema(schema_id, found["schema"], found.get("schemaType", "AVRO"))
        self._cache[schema_id] = schema
        while len(self._cache) > self.settings.cache_size:
            self._cache.popitem(last=False)
        return schema

    def subject_schema(self, subject: str, version: int | str) -> WriterSchema:
        """A subject's version (``latest`` or a number).

        Raises:
            ConfigError: the registry has no such subject or version.
        """
        found = self._get(f"/subjects/{urllib.parse.quote(subject, safe='')}/versions/{version}")
        if found is None:
            raise ConfigError(f"the schema registry has no subject {subject!r} version {version}",
                              field_path="source.value.registry.subject")  # fmt: skip
        return WriterSchema(int(found["id"]), found["schema"], found.get("schemaType", "AVRO"))


def resolves(writer: str, reader: str) -> str | None:
    """Why data written with ``writer`` cannot be read as ``reader`` (None: it can), by Avro's resolution of
    a record generated from the writer schema."""
    import fastavro
    from fastavro.utils import generate_one

    try:
        parsed_writer = fastavro.parse_schema(json.loads(writer))
        parsed_reader = fastavro.parse_schema(json.loads(reader))
        buffer = io.BytesIO()
        fastavro.schemaless_writer(buffer, parsed_writer, generate_one(parsed_writer))
        buffer.seek(0)
        fastavro.schemaless_reader(buffer, parsed_writer, parsed_reader)
    except Exception as exc:  # fastavro's SchemaResolutionError, or a schema it cannot parse
        return f"{type(exc).__name__}: {exc}"[:300]
    return None
