"""What the Spark beside the package cannot carry is refused by `validate` (and so by `run`, which validates
first) in one line naming the feature and the version, before Spark starts (#56). JVM-free, and marked
`compat`: every Spark compatibility tier runs it against its own pyspark, so each refusal is seen on the
version that makes it and each acceptance on the versions that carry the feature."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from streaming_dq.cli.main import app
from streaming_dq.compat.versions import has, pyspark_version

pytestmark = pytest.mark.compat

SPARK = pyspark_version()
BASE = """\
gate: {{name: orders, event-time: order_ts}}
source:
  format: json
  path: landing
  schema: "order_id STRING, amount DOUBLE, payload STRING, order_ts TIMESTAMP"
checkpoint: state
targets: {{pass: {pass_}, quarantine: q, writer: {writer}}}
checks:
  - {{check: null-check, check-id: id-present, columns: [order_id]}}
{extra}"""


def validate(
    tmp_path: Path, *, writer: str = "delta-rs", pass_: str = "p", extra: str = ""
) -> tuple[int, str]:
    (tmp_path / "landing").mkdir(exist_ok=True)
    config = tmp_path / "job.yaml"
    config.write_text(BASE.format(writer=writer, pass_=pass_, extra=extra), encoding="utf-8")
    result = CliRunner().invoke(app, ["validate", str(config)])
    return result.exit_code, result.stderr


def test_writer_spark_is_refused_only_where_no_delta_release_supports_the_spark(tmp_path: Path) -> None:
    code, err = validate(tmp_path, writer="spark")

    if SPARK is not None and SPARK.startswith("4.3."):
        assert code == 2
        assert err.splitlines() == [
            f"{tmp_path / 'job.yaml'}: targets.writer: writer: spark needs delta-spark, and no Delta release "
            f"supports Spark {SPARK} (Delta runs on Spark 3.5, 4.0, 4.1, 4.2): use writer: delta-rs, which "
            "writes on every Spark"
        ]
    else:
        assert (code, err) == (0, "")


@pytest.mark.parametrize(
    ("feature", "check", "since"),
    [
        ("variant", "{check: json-format-check, check-id: payload-json, columns: [payload]}", "4.0"),
        (
            "kll_sketch",
            "{check: quantile-check, check-id: p95, column: amount, quantile: 0.95, le: 9}",
            "4.1",
        ),
    ],
)
def test_a_check_the_spark_cannot_carry_is_one_line_naming_it_and_the_version(
    tmp_path: Path, feature: str, check: str, since: str
) -> None:
    code, err = validate(tmp_path, extra=f"  - {check}\n")

    if has(feature):
        assert (code, err) == (0, ""), err
    else:
        [line] = err.splitlines()
        assert code == 2
        assert line.startswith(f"{tmp_path / 'job.yaml'}: checks[1].check: ")
        assert f"needs Spark {since} or newer" in line and f"this is Spark {SPARK}" in line


def test_spark_s_writer_on_s3_is_refused_before_s3a_has_conditional_create(tmp_path: Path) -> None:
    s3 = "s3://bucket/orders/pass, storage-options: {aws_conditional_put: etag}"
    code, err = validate(tmp_path, writer="spark", pass_=s3)

    refusals = [line for line in err.splitlines() if "with a table on S3" in line]
    if has("s3a_conditional_create"):  # (the bucket itself does not exist: validate says so on another line)
        assert refusals == [], err
    else:
        [line] = refusals
        assert code == 2
        assert (
            "targets.writer: writer: spark with a table on S3 (targets.pass) needs Spark 4.1 or newer" in line
        )
        assert f"this is Spark {SPARK}" in line and "use writer: delta-rs" in line
