"""Storage options: where the config's keys go, how they merge, and that their secrets are never shown."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from streaming_dq.config.loader import load_gate_config
from streaming_dq.exceptions import ConfigError, TargetWriteError
from streaming_dq.sink.references import ReferenceSpec
from streaming_dq.tables import DeltaTarget
from streaming_dq.tables.storage import delta_rs_options, mask, merged, redacted
from streaming_dq.tables.targets import writing

SECRET = "PLANTED-secret-7f3a9"


def write_config(tmp_path: Path, **sections: object) -> Path:
    data = {
        "gate": {"name": "orders"},
        "source": {"format": "parquet", "path": "s3a://lake/landing"},
        "checkpoint": "state",
        "targets": {"pass": "s3://lake/pass", "quarantine": "s3://lake/quarantine", "results": "s3://lake/r"},
        "checks": [{"check": "null-check", "check-id": "id", "columns": ["id"]}],
        **sections,
    }
    path = tmp_path / "gate.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_a_section_s_options_override_the_gate_wide_ones_key_by_key(tmp_path, monkeypatch):
    monkeypatch.setenv("DQ_SECRET", SECRET)
    path = write_config(
        tmp_path,
        **{
            "storage-options": {"AWS_REGION": "us-east-1", "AWS_SECRET_ACCESS_KEY": "${DQ_SECRET}"},
            "reference-datasets": {
                "customers": {
                    "format": "delta",
                    "path": "s3://refs/customers",
                    "storage-options": {"AWS_REGION": "eu-west-1"},
                }
            },
        },
    )
    config = load_gate_config(path)
    config = config.model_copy(
        update={"targets": config.targets.model_copy(update={"storage_options": {"AWS_ALLOW_HTTP": "true"}})}
    )
    table = config.table("results")
    assert table.uri == "s3://lake/r"  # a URI is left as written, not resolved against the config's folder
    assert dict(table.storage_options) == {
        "AWS_REGION": "us-east-1",
        "AWS_SECRET_ACCESS_KEY": SECRET,  # expanded from the environment
        "AWS_ALLOW_HTTP": "true",
    }
    assert set(config.tables()) == {"pass", "quarantine", "results"}
    assert config.reference_storage_options("customers") == {
        "AWS_REGION": "eu-west-1",
        "AWS_SECRET_ACCESS_KEY": SECRET,
    }


def test_an_unset_secret_variable_names_the_file_and_the_field(tmp_path, monkeypatch):
    monkeypatch.delenv("DQ_SECRET", raising=False)
    path = write_config(tmp_path, **{"storage-options": {"AWS_SECRET_ACCESS_KEY": "${DQ_SECRET}"}})
    with pytest.raises(ConfigError) as caught:
        load_gate_config(path)
    message = str(caught.value)
    assert (
        "gate.yaml" in message
        and "storage-options.AWS_SECRET_ACCESS_KEY" in message
        and "DQ_SECRET" in message
    )


def test_a_target_and_a_reference_never_show_their_secret():
    options = {
        "AWS_ENDPOINT_URL": "http://127.0.0.1:9000",
        "AWS_SECRET_ACCESS_KEY": SECRET,
        "token": SECRET + "x",
    }
    target = DeltaTarget("s3://lake/pass", options)
    spec = ReferenceSpec("delta", "s3://lake/customers", storage_options=options)
    for shown in (repr(target), str(target), repr(spec), repr(redacted(options))):
        assert SECRET not in shown, shown
    assert redacted(options)["AWS_ENDPOINT_URL"] == "http://127.0.0.1:9000"  # not a secret: shown
    assert mask(f"failed: {SECRET}x and {SECRET}", options) == "failed: *** and ***"


def test_a_client_error_that_repeats_a_secret_is_masked_in_the_batch_s_error():
    target = DeltaTarget("s3://lake/pass", {"AWS_SECRET_ACCESS_KEY": SECRET})
    with pytest.raises(TargetWriteError) as caught, writing(target, 3):
        raise OSError(f"request signed with {SECRET} was refused")
    assert SECRET not in str(caught.value) and "***" in str(caught.value)
    assert "s3://lake/pass" in str(caught.value)


def test_hadoop_keys_are_not_given_to_delta_rs_and_layers_merge_in_order():
    assert delta_rs_options({"fs.s3a.endpoint": "x", "spark.hadoop.a": "y"}) is None
    assert delta_rs_options({"fs.s3a.endpoint": "x", "AWS_REGION": "r"}) == {"AWS_REGION": "r"}
    assert merged({"a": "1", "b": "1"}, None, {"b": "2"}) == {"a": "1", "b": "2"}


def test_commits_on_s3_need_conditional_writes_or_a_lock_and_unsafe_rename_is_refused():
    from streaming_dq.tables.storage import unsafe_commit_problem

    assert "aws_conditional_put: etag" in (unsafe_commit_problem("s3://lake/t", {}, {}) or "")
    assert "UNSAFE_RENAME" in (
        unsafe_commit_problem(
            "s3a://lake/t", {"aws_conditional_put": "etag", "allow_unsafe_rename": "true"}, {}
        )
        or ""
    )
    assert unsafe_commit_problem("s3://lake/t", {"AWS_S3_LOCKING_PROVIDER": "dynamodb"}, {}) is None
    assert (
        unsafe_commit_problem("s3://lake/t", {}, {"AWS_CONDITIONAL_PUT": "etag"}) is None
    )  # the environment
    assert unsafe_commit_problem("/data/t", {}, {}) is None
    assert unsafe_commit_problem("abfss://c@a.dfs.core.windows.net/t", {}, {}) is None  # atomic there


def test_a_gate_refuses_to_create_a_table_on_s3_without_a_safe_commit_mode():
    import pyarrow as pa

    from streaming_dq.tables import DeltaRsWriter

    with pytest.raises(ConfigError) as caught:
        DeltaRsWriter().create_table(
            DeltaTarget("s3://lake/pass", {"AWS_REGION": "us-east-1"}), pa.schema([])
        )
    assert "s3://lake/pass" in str(caught.value) and "conditional" in str(caught.value)


def test_spark_gets_s3a_settings_per_bucket_and_they_stay_redacted():
    from streaming_dq.tables.storage import hadoop_options, spark_uri

    options = {
        "AWS_ENDPOINT_URL": "http://127.0.0.1:9000",
        "AWS_ACCESS_KEY_ID": "AKIA1",
        "AWS_SECRET_ACCESS_KEY": SECRET,
        "AWS_SESSION_TOKEN": "tok",
        "AWS_REGION": "us-east-1",
        "fs.s3a.connection.maximum": "50",
    }
    settings = hadoop_options("s3://lake/orders/pass", options)
    assert settings == {
        "fs.s3a.connection.maximum": "50",
        "fs.s3a.bucket.lake.endpoint": "http://127.0.0.1:9000",
        "fs.s3a.bucket.lake.access.key": "AKIA1",
        "fs.s3a.bucket.lake.secret.key": SECRET,
        "fs.s3a.bucket.lake.session.token": "tok",
        "fs.s3a.bucket.lake.endpoint.region": "us-east-1",
        "fs.s3a.bucket.lake.aws.credentials.provider": "org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider",
        "fs.s3a.bucket.lake.path.style.access": "true",
    }
    shown = redacted(settings)
    assert shown["fs.s3a.bucket.lake.endpoint"] == "http://127.0.0.1:9000"
    assert {shown[f"fs.s3a.bucket.lake.{k}"] for k in ("access.key", "secret.key", "session.token")} == {
        "***"
    }
    assert hadoop_options("/data/pass", options) == {"fs.s3a.connection.maximum": "50"}  # not S3: fs.* only
    assert spark_uri("s3://lake/x") == "s3a://lake/x" and spark_uri("gs://b/x") == "gs://b/x"


def test_the_session_loads_s3a_only_when_spark_itself_touches_the_store(tmp_path, monkeypatch):
    from streaming_dq.runtime.session import storage_conf

    monkeypatch.setenv("DQ_SECRET", SECRET)
    wide = {"storage-options": {"AWS_ACCESS_KEY_ID": "AKIA1", "AWS_SECRET_ACCESS_KEY": "${DQ_SECRET}"}}
    embedded = load_gate_config(write_config(tmp_path, **wide))  # delta-rs tables on S3, local checkpoint
    bundles, settings = storage_conf(embedded)
    assert bundles == ["s3"]  # the source is read by Spark from s3a://lake/landing
    assert settings["fs.s3a.bucket.lake.secret.key"] == SECRET

    local = write_config(tmp_path, **wide)
    data = yaml.safe_load(local.read_text())
    data["source"]["path"] = "landing"
    data["targets"]["writer"] = "delta-rs"  # with auto, Spark's writer may write the tables
    local.write_text(yaml.safe_dump(data))
    assert storage_conf(load_gate_config(local)) == ([], {})  # Spark reads and writes local paths only
    data["targets"]["writer"] = "spark"
    local.write_text(yaml.safe_dump(data))
    bundles, settings = storage_conf(load_gate_config(local))
    assert bundles == ["s3"] and "fs.s3a.bucket.lake.access.key" in settings


def test_the_source_s_own_options_override_the_gate_wide_ones_and_reach_spark_for_its_bucket(
    tmp_path, monkeypatch
):
    from streaming_dq.runtime.session import storage_conf

    monkeypatch.setenv("DQ_SECRET", SECRET)
    path = write_config(
        tmp_path,
        **{"storage-options": {"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "AKIA-GATE"}},
    )
    data = yaml.safe_load(path.read_text())
    data["source"] = {
        "format": "parquet",
        "path": "s3a://landing-zone/orders",
        "storage-options": {"AWS_ACCESS_KEY_ID": "AKIA-SOURCE", "AWS_SECRET_ACCESS_KEY": "${DQ_SECRET}"},
    }
    path.write_text(yaml.safe_dump(data))
    config = load_gate_config(path)
    assert config.source_storage_options() == {
        "AWS_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "AKIA-SOURCE",
        "AWS_SECRET_ACCESS_KEY": SECRET,
    }
    _, settings = storage_conf(config)
    assert settings["fs.s3a.bucket.landing-zone.access.key"] == "AKIA-SOURCE"
    assert settings["fs.s3a.bucket.landing-zone.secret.key"] == SECRET
    assert settings["fs.s3a.bucket.lake.access.key"] == "AKIA-GATE"  # the tables keep the gate-wide keys


def test_the_documented_local_s3_server_prints_settings_a_delta_table_works_with(tmp_path: Path) -> None:
    """#42: the S3 server the tests use was not documented for users. docs/deploy.md's command runs it; the
    settings it prints (endpoint, allow-http, commit mode, keys) take a Delta table there and back."""
    import re
    import signal
    import subprocess
    import sys

    import pyarrow as pa
    import yaml
    from deltalake import DeltaTable, write_deltalake

    doc = (Path(__file__).resolve().parents[2] / "docs" / "deploy.md").read_text(encoding="utf-8")
    assert "python -m streaming_dq.devtools.local_s3" in doc
    server = subprocess.Popen(
        [sys.executable, "-m", "streaming_dq.devtools.local_s3", "--workdir", str(tmp_path)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert server.stdout is not None
        lines: list[str] = []
        while not lines or not (lines[-1].startswith("(tables at") or lines[-1] == ""):
            lines.append(server.stdout.readline())
        text = "".join(lines)
        exported = dict(re.findall(r"(DQ_S3_\w+)=(\S+)", text))
        block = text[text.index("storage-options:\n") : text.index("(tables at")]
        options = {k: str(v) for k, v in yaml.safe_load(block)["storage-options"].items()}
        options = {k: exported.get(v.strip("${}"), v) for k, v in options.items()}
        write_deltalake("s3://lake/t", pa.table({"x": [1, 2]}), storage_options=options)
        assert DeltaTable("s3://lake/t", storage_options=options).to_pyarrow_table().num_rows == 2
    finally:
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=60) == 0
