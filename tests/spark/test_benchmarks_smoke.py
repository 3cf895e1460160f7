"""The benchmark harness runs its smallest configuration end to end (structure only, never timings)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

pytestmark = pytest.mark.spark


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and math.isfinite(value) and value > 0


def test_tiny_grid_measures_every_variant_and_writes_the_report(spark: object, tmp_path: Path) -> None:
    from benchmarks.run import TINY, RunConfig, run

    config = RunConfig(
        grid=TINY,
        mode="tiny",
        work=tmp_path / "work",
        results=tmp_path / "latest.json",
        doc=tmp_path / "performance.md",
        plot=False,
        command="pytest smoke",
    )
    results = run(config, spark=spark, log=lambda _msg: None)

    cells = {(c["rows"], c["checks"], c["variant"]): c for c in results["cells"]}
    assert set(cells) == {
        (1000, 0, "plain"),
        (1000, 1, "floor"),
        (1000, 1, "gate"),
        (1000, 2, "floor"),
        (1000, 2, "gate"),
    }
    for cell in cells.values():
        assert len(cell["stream_seconds"]) == TINY.reps
        assert all(_finite(s) for s in cell["stream_seconds"])
        assert len(cell["jobs_per_batch"]) == TINY.batches_for(1000) * TINY.reps
        assert all(j >= 1 for j in cell["jobs_per_batch"])
    # the floor and the gate route the same rows: same predicates, exactly one place per row
    for n in (1, 2):
        floor, gate = cells[(1000, n, "floor")]["routed"], cells[(1000, n, "gate")]["routed"]
        assert floor == gate
        assert floor["pass"] + floor["quarantine"] == 2 * 1000
    assert cells[(1000, 2, "gate")]["routed"]["quarantine"] > 0

    summary = results["summary"]
    for o in summary["overhead_stream"] + summary["overhead_batch_fn"]:
        assert all(_finite(o[k]) for k in ("gate_over_floor", "gate_over_plain", "floor_over_plain"))
    assert [(s["few"], s["many"]) for s in summary["check_scaling"]] == [(1, 2)]
    assert _finite(summary["check_scaling"][0]["gate_stream"])
    gate_jobs = [j for j in summary["jobs"] if j["variant"] == "gate"]
    assert [j["checks"] for j in gate_jobs] == [1, 2]
    assert all(j["jobs_max"] >= 1 and j["sql_max"] >= 1 for j in gate_jobs)
    assert {t["target"].split(" ")[0] for t in summary["targets"]} >= {"gate", "Spark"}

    assert json.loads((tmp_path / "latest.json").read_text())["meta"]["mode"] == "tiny"
    report = (tmp_path / "performance.md").read_text()
    assert "## Targets" in report and "gate/floor" in report and "pytest smoke" in report


def test_the_catalog_benchmark_sets_grow_and_build() -> None:
    from benchmarks.catalog import check_sets
    from streaming_dq.config.check_set import CheckSet
    from streaming_dq.core.base_check import BaseRowCheck, ObservableAggregateCheck

    sets = check_sets()
    sizes = [len(v) for v in sets.values()]
    assert sizes == sorted(sizes) and len(set(sizes)) == len(sizes)
    built = {name: CheckSet.from_dicts(configs) for name, configs in sets.items()}
    one_pass = [c for c in built["+observable"] if isinstance(c, BaseRowCheck | ObservableAggregateCheck)]
    # every check before +classic rides on the one pass: a row check without a validate() of its own
    assert len(one_pass) == len(sets["+observable"])
    assert all(type(c).validate is BaseRowCheck.validate for c in one_pass if isinstance(c, BaseRowCheck))


def test_the_calendar_benchmark_measures_every_variant(spark: object, tmp_path: Path) -> None:
    from benchmarks.profile_cost import VARIANTS, measure

    result = measure(spark, rows=2000, batches=1, rounds=1, work=tmp_path)
    assert set(result["variants"]) == set(VARIANTS)
    for m in result["variants"].values():
        assert _finite(m["seconds"]) and _finite(m["seconds_ratio"]) and len(m["all_seconds"]) == 1
