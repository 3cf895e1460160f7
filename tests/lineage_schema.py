"""Validating OpenLineage events against the published JSON Schemas (tests/data/openlineage-spec/) and the
gate's own facet schema (streaming_dq/lineage/StreamingDqBatchRunFacet.json): the whole event against
``RunEvent``, then every facet against the schema its ``_schemaURL`` names, formats (uri, uuid, date-time)
checked."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker
from referencing import Registry, Resource

SPEC = Path(__file__).parent / "data" / "openlineage-spec"
OWN = Path(__file__).resolve().parents[1] / "streaming_dq" / "lineage" / "StreamingDqBatchRunFacet.json"
RUN_EVENT = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"


@cache
def registry() -> Registry:
    schemas = [json.loads(p.read_text()) for p in [*sorted(SPEC.glob("*.json")), OWN]]
    return Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in schemas)


def _validator(ref: str) -> Draft202012Validator:
    return Draft202012Validator({"$ref": ref}, registry=registry(), format_checker=FormatChecker())


def facets(event: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every facet of the event, with where it sits."""
    groups: list[tuple[str, Mapping[str, Any] | None]] = [
        ("run", event["run"].get("facets")),
        ("job", event["job"].get("facets")),
    ]
    for kind in ("inputs", "outputs"):
        for dataset in event.get(kind) or []:
            for key in ("facets", "inputFacets", "outputFacets"):
                groups.append((f"{kind}[{dataset['name']}].{key}", dataset.get(key)))
    for where, group in groups:
        for name, facet in (group or {}).items():
            yield f"{where}.{name}", facet


def validate_event(event: Mapping[str, Any]) -> list[str]:
    """The facets checked (where they sit); raises ``jsonschema.ValidationError`` (or an unresolvable
    ``_schemaURL``) on the first violation."""
    _validator(RUN_EVENT).validate(event)
    checked = []
    for where, facet in facets(event):
        _validator(facet["_schemaURL"]).validate(facet)
        checked.append(where)
    return checked
