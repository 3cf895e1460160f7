"""The benchmark's analysis: what it compares and when it has nothing to compare."""

from typing import Any

from benchmarks import analysis


def cell(rows: int, checks: int, variant: str, seconds: float) -> dict[str, Any]:
    return {
        "rows": rows,
        "checks": checks,
        "variant": variant,
        "stream_median": seconds,
        "batch_fn_median": seconds / 3,
    }


def test_check_scaling_divides_the_many_checks_cell_by_the_few_checks_cell() -> None:
    cells = [
        cell(10, 5, "gate", 2.0),
        cell(10, 50, "gate", 3.0),
        cell(10, 5, "floor", 1.0),
        cell(10, 50, "floor", 1.25),
    ]
    [row] = analysis.check_scaling(cells, 5, 50)
    assert (row["rows"], row["few"], row["many"]) == (10, 5, 50)
    assert (row["gate_stream"], row["floor_stream"]) == (1.5, 1.25)


def test_a_grid_of_one_number_of_checks_has_no_scaling_to_report() -> None:
    cells = [cell(10, 20, "gate", 2.0), cell(10, 20, "floor", 1.0)]
    assert analysis.check_scaling(cells, 20, 20) == []
