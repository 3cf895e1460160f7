"""The JAR bundles' Maven coordinates follow the installed pyspark."""

from pathlib import Path

import pyspark

from streaming_dq.runtime.jvm import BUNDLES, bundle, spark_hadoop_version


def test_the_s3_bundle_is_the_hadoop_aws_of_spark_s_own_hadoop_client() -> None:
    jars = Path(pyspark.__file__).parent / "jars"
    (client,) = jars.glob("hadoop-client-api-*.jar")
    version = spark_hadoop_version()
    assert client.name == f"hadoop-client-api-{version}.jar"
    assert [a.coordinate for a in bundle("s3")] == [f"org.apache.hadoop:hadoop-aws:{version}"]


def test_every_bundle_names_at_least_one_artifact_of_a_released_version() -> None:
    for name in BUNDLES:
        artifacts = bundle(name)
        assert artifacts and all(a.version[0].isdigit() for a in artifacts), name
