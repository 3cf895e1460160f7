"""What the Spark of this test run carries (#56), for tests whose cases exist only where the feature does.

The main suite runs on the newest Spark with a Delta release, where every case runs; a compatibility tier
(tests/spark_tier.sh) runs the same tests on its Spark, leaving out only the cases that Spark cannot carry and
that ``validate`` refuses there (tests/unit/test_spark_features.py shows each refusal on the Spark that makes
it). No test is skipped for a missing install: a case is left out of the parametrization instead.
"""

from __future__ import annotations

from streaming_dq.compat.artifacts import delta_refusal
from streaming_dq.compat.versions import has, spark_minor

#: Spark's Delta writer runs here (no Delta release supports Spark 4.3).
SPARK_WRITER = delta_refusal() is None
#: Spark's writer can commit to S3 here (S3A's conditional create: Hadoop 3.4.2, pyspark 4.1+).
SPARK_WRITER_ON_S3 = SPARK_WRITER and has("s3a_conditional_create")
#: Spark's S3A talks to the S3 server process of the tests (moto_server). Not on 3.5: its S3A (Hadoop 3.3.4,
#: AWS SDK v1) gets SignatureDoesNotMatch from it on every request (seen in the 3.5 tier); the tier leaves the
#: object-store test out there, and docs/deploy.md says S3 through Spark 3.5 is not verified here.
S3A_HERE = spark_minor() != "3.5"


def writers(*wanted: str, on_s3: bool = False) -> list[str]:
    """``wanted`` without the Spark writer's forms (``spark``, ``spark+delta-rs``, ``cluster-spark-writer``)
    where this Spark cannot carry them."""
    carried = SPARK_WRITER_ON_S3 if on_s3 else SPARK_WRITER
    return [w for w in wanted if carried or "spark" not in w]


#: The heavier server tests run in the tiers where their path differs, one of them per tier (the tiers' time):
#: Spark Connect on 3.5 (its own Connect, the server's JARs from Maven) and 4.3 (the newest); S3 on 4.0 (S3A
#: with the AWS SDK v2 beside delta-rs) and 4.1 (Spark's writer by S3A's conditional create). The main
#: suite runs them all.
CONNECT_TIER = spark_minor() in ("3.5", "4.3")
S3_TIER = spark_minor() in ("4.0", "4.1")
