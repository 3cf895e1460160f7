"""``streaming-dq quarantine show`` (#45): a gate's quarantined rows with their reasons, release state and
first-occurrence pointers, selected by check, batch and state, masked where asked; wrong options name the
option. The tables are written by a real gate and a real release, then read by the command (delta-rs)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_stream_duplicates import DAY0, frame, gate_at, once
from typer.testing import CliRunner

from streaming_dq.cli.main import app

pytestmark = pytest.mark.spark

CHECKS = [
    *once(),
    {
        "check": "numeric-min-check",
        "check-id": "offset-ok",
        "columns": ["offset"],
        "min-value": 0,
        "inclusive": True,
    },
]


def config_for(tmp: Path) -> Path:
    (tmp / "landing").mkdir()
    spec: dict[str, Any] = {
        "gate": {"name": "orders", "event-time": "ts"},
        "source": {
            "format": "json",
            "path": "landing",
            "schema": "order_id BIGINT, ts TIMESTAMP, offset BIGINT",
        },
        "checkpoint": "state",
        "targets": {role: str(tmp / role) for role in ("pass", "quarantine", "results", "keys")},
        "checks": CHECKS,
    }
    path = tmp / "orders.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return path


def show(config: Path, *args: str) -> Any:
    result = CliRunner().invoke(app, ["quarantine", "show", str(config), *args])
    return result


def test_show_lists_reasons_states_and_pointers_and_selects_by_check_batch_and_state(spark, tmp_path):
    from streaming_dq.release import Fix, ReleaseRequest, release

    gate = gate_at(tmp_path, checks=CHECKS)
    gate(frame(spark, [(1, DAY0, -1), (2, DAY0, 1)]), 0)  # order 1 fails offset-ok
    gate(
        frame(spark, [(1, DAY0, 2), (3, DAY0, -5)]), 1
    )  # order 1 again: a duplicate; order 3 fails offset-ok
    report = release(
        gate, spark, ReleaseRequest(checks=("offset-ok",), batches=(0, 0), fixes=(Fix.parse("offset = 0"),))
    )
    assert report.released == 1
    config = config_for(tmp_path)

    every = show(config, "--json")
    assert every.exit_code == 0, every.output
    shown = json.loads(every.stdout)
    assert (shown["matched"], shown["shown"]) == (3, 3)
    by_offset = {r["offset"]: r for r in shown["rows"]}
    assert {o: r["state"] for o, r in by_offset.items()} == {
        -1: "released",
        2: "quarantined",
        -5: "quarantined",
    }
    assert [e["check-id"] for e in by_offset[2]["_dq_errors"]] == ["order-once"]
    assert by_offset[2]["_dq_first_seen"][0]["origin"] == "offset=-1"  # where order 1 was first seen

    def offsets(*args: str) -> list[int]:
        result = show(config, "--json", *args)
        assert result.exit_code == 0, result.output
        return sorted(r["offset"] for r in json.loads(result.stdout)["rows"])

    assert offsets("--check", "order-once") == [2]
    assert offsets("--check", "offset-ok") == [-5, -1]
    assert offsets("--state", "released") == [-1]
    assert offsets("--batches", "1..", "--state", "quarantined") == [-5, 2]
    limited = json.loads(show(config, "--json", "--limit", "1").stdout)
    assert (limited["matched"], limited["shown"]) == (3, 1)
    masked = json.loads(show(config, "--json", "--mask", "order_id").stdout)["rows"]
    assert {r["order_id"] for r in masked} == {"***"}

    text = show(config)  # the terminal's view: one line per row
    assert text.exit_code == 0, text.output
    assert "order-once: batch 0, offset=-1" in text.stdout, text.stdout
    assert f"released (release {report.release_id[:8]})" in text.stdout, text.stdout
    assert "3 quarantined row(s) match" in text.stdout
    nothing = show(config, "--check", "order-once", "--batches", "0")
    assert nothing.exit_code == 0 and "no quarantined row matches" in nothing.stdout, nothing.stdout

    for args, field in (
        (["--check", "order-onse"], "order-once"),
        (["--state", "lost"], "--state"),
        (["--mask", "email"], "--mask"),
        (["--batches", "3..1"], "--batches"),
    ):
        refused = show(config, *args)
        assert refused.exit_code == 2 and field in refused.stderr, (args, refused.output)
