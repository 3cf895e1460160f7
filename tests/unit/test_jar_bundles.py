"""The JAR bundles' Maven coordinates follow the installed pyspark."""

from pathlib import Path

import pyspark

from streaming_dq.compat.versions import has
from streaming_dq.runtime.jvm import BUNDLES, bundle, spark_hadoop_version


def test_the_s3_bundle_is_the_hadoop_aws_of_spark_s_own_hadoop_client() -> None:
    jars = Path(pyspark.__file__).parent / "jars"
    (client,) = jars.glob("hadoop-client-api-*.jar")
    version = spark_hadoop_version()
    assert client.name == f"hadoop-client-api-{version}.jar"
    assert [a.coordinate for a in bundle("s3")] == [f"org.apache.hadoop:hadoop-aws:{version}"]


def test_every_bundle_names_at_least_one_artifact_of_a_released_version() -> None:
    for name in BUNDLES:
        if name == "connect":
            continue  # pyspark ships the Connect server from 4.0 on: below
        artifacts = bundle(name)
        assert artifacts and all(a.version[0].isdigit() for a in artifacts), name


def test_the_connect_server_is_fetched_only_where_pyspark_does_not_ship_it() -> None:
    from streaming_dq.runtime.pyspark_jars import pyspark_home

    shipped = any((Path(pyspark_home()) / "jars").glob("spark-connect_*.jar"))
    assert bool(bundle("connect")) is not shipped
    assert shipped is has("to_arrow")  # 4.0 brought both into pyspark itself


def test_a_kafka_source_gets_spark_avro_for_plain_and_registry_framed_avro_payloads() -> None:
    """A job reading ``avro-registry`` values started without spark-avro: ``from_avro`` refused to run
    (AVRO_NOT_LOADED_SQL_FUNCTIONS_UNUSABLE); the tests' own session had it loaded, so only a job noticed."""
    from streaming_dq.config.source_model import SourceSection
    from streaming_dq.runtime.session import source_bundles

    def bundles(value: dict[str, object]) -> list[str]:
        source = {"format": "kafka", "bootstrap-servers": "127.0.0.1:9092", "subscribe": "t", "value": value}
        return list(source_bundles(SourceSection.model_validate(source)))

    assert bundles({"format": "json", "schema": "a INT"}) == ["kafka"]
    assert bundles({"format": "avro", "avro-schema-file": "a.avsc"}) == ["kafka", "avro"]
    assert bundles({"format": "avro-registry", "registry": {"url": "http://127.0.0.1:1"}}) == [
        "kafka",
        "avro",
    ]
    json_registry = {"format": "json-registry", "schema": "a INT", "registry": {"url": "http://127.0.0.1:1"}}
    assert bundles(json_registry) == ["kafka"]  # JSON needs no spark-avro
