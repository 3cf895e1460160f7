"""A gate job whose tables are on an S3 server (moto_server, a process of its own), configured in YAML.

The shipped orders job with its four tables moved to ``s3://lake/...`` and ``storage-options:`` written with
``${ENV}`` for the keys: ``streaming-dq run`` streams into the store, the tables are read back from it, and
the secret key appears nowhere: not in ``validate``'s or ``run``'s output, not in any row of the four tables,
not on ``/metrics``. A wrong bucket, a wrong secret key and an unsafe commit mode each end the job before its
first batch, exit 2, with one line naming the file and the field.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from jobs_support import CLI, background_run, in_order, interrupt, make_orders_job

from streaming_dq.devtools.local_s3 import S3Server
from streaming_dq.tables.reading import read_table
from tests.spark_lines import S3_TIER, S3A_HERE, writers

pytestmark = pytest.mark.integration

STORAGE = """
storage-options:
  AWS_ENDPOINT_URL: {endpoint}
  AWS_REGION: us-east-1
  AWS_ALLOW_HTTP: "true"
  aws_conditional_put: etag      # commits by conditional put: safe with concurrent writers
  AWS_ACCESS_KEY_ID: ${{DQ_S3_KEY}}
  AWS_SECRET_ACCESS_KEY: ${{DQ_S3_SECRET}}
"""
ROLES = {"pass": "orders_pass", "quarantine": "orders_quarantine", "results": "orders_results",
         "metrics": "orders_metrics"}  # fmt: skip
TABLES = {**ROLES, "keys": "orders_keys"}


def on_the_store(config: Path, s3: S3Server, tables: str) -> None:
    """Move the config's tables to ``tables`` (an ``s3://`` prefix) and add the store's options."""
    text = config.read_text(encoding="utf-8")
    for name in ROLES.values():
        assert f"data/tables/{name}" in text
        text = text.replace(f"data/tables/{name}", f"{tables}/{name}")
    text = text.replace("trigger: available-now ", 'trigger: {processing-time: "1 second"} ')
    assert "processing-time" in text
    config.write_text(text + STORAGE.format(endpoint=s3.endpoint), encoding="utf-8")


def cli_env(s3: S3Server, secret: str | None = None) -> dict[str, str]:
    return {
        **os.environ,
        "PYSPARK_PYTHON": sys.executable,
        "COLUMNS": "200",
        "DQ_S3_KEY": s3.access_key,
        "DQ_S3_SECRET": secret if secret is not None else s3.secret_key,
    }


def table_rows(s3: S3Server, uri: str) -> list[dict[str, object]]:
    return read_table(uri, storage_options=s3.storage_options()).to_pylist()


@pytest.mark.parametrize(
    "writer",  # one of them in the tiers (#56): Spark's writer where it commits to S3, else delta-rs
    [
        pytest.param(
            w,
            marks=[pytest.mark.compat]
            if S3_TIER and S3A_HERE and w == writers("delta-rs", "spark", on_s3=True)[-1]
            else [],
        )
        for w in writers("delta-rs", "spark", on_s3=True)
    ],
)
def test_a_job_streams_into_tables_on_the_store_and_its_secret_appears_nowhere(
    tmp_path: Path, s3: S3Server, writer: str
):
    """delta-rs commits from the driver, Spark's writer through S3A; the streaming checkpoint is on the store
    with either (and so is the lease that keeps a second job off it)."""
    config, summary = make_orders_job(tmp_path, batches=2, rows=30)
    in_order(summary["files"])
    tables = f"s3://lake/orders-{tmp_path.name}"
    on_the_store(config, s3, tables)
    # the streaming checkpoint on the store too, with either writer (Spark keeps it through S3A; #42 item 10)
    text = config.read_text(encoding="utf-8")
    assert "writer: delta-rs" in text and "checkpoint: data/state/orders" in text
    text = text.replace("checkpoint: data/state/orders", f"checkpoint: {tables}/checkpoint")
    config.write_text(text.replace("writer: delta-rs", f"writer: {writer}"), encoding="utf-8")
    # the reference on the store too, at s3:// as the tables (#42: Spark said `No FileSystem for scheme "s3"`)
    reference = f"orders-{tmp_path.name}/reference/customers.csv"
    s3.client().upload_file(str(tmp_path / "data" / "reference" / "customers.csv"), "lake", reference)
    text = config.read_text(encoding="utf-8")
    assert "path: data/reference/customers.csv" in text
    config.write_text(
        text.replace("path: data/reference/customers.csv", f"path: s3://lake/{reference}"), "utf-8"
    )
    # duplicates across batches too (#44): the keys table on the store, read by Spark through S3A
    text = config.read_text(encoding="utf-8")
    keys_target = f"  metrics: {tables}/orders_metrics\n"
    assert keys_target in text and "checks:\n" in text
    text = text.replace(keys_target, f"{keys_target}  keys: {tables}/orders_keys\n")
    once = "  - {check: unique-key-check, check-id: order-once, columns: [order_id], horizon: 30 days}\n"
    config.write_text(text.replace("checks:\n", "checks:\n" + once, 1), encoding="utf-8")
    env = cli_env(s3)
    secret = s3.secret_key

    validated = subprocess.run([str(CLI), "validate", str(config)], capture_output=True, text=True, env=env)
    assert validated.returncode == 0, validated.stdout + validated.stderr
    assert secret not in validated.stdout + validated.stderr

    log = tmp_path / "run.log"
    with background_run(config, log, env=env, cwd=tmp_path) as run:
        deadline, url = time.monotonic() + 300, None
        while time.monotonic() < deadline and run.poll() is None:
            found = re.search(
                r"metrics at (http://127\.0\.0\.1:\d+/metrics)", log.read_text(errors="replace")
            )
            url = found[1] if found else None
            if url and len(re.findall(r"^batch ", log.read_text(errors="replace"), re.M)) >= 2:
                break
            time.sleep(0.5)
        assert url is not None and run.poll() is None, log.read_text()
        with urllib.request.urlopen(url, timeout=10) as response:
            exposition = response.read().decode()
        assert "streaming_dq_rows_total{" in exposition and 'gate="orders"' in exposition, exposition[:2000]
        # the same config again, beside it (#41): refused in one line before Spark (the lease is an object on
        # the store, beside the checkpoint)
        second = subprocess.run(
            [str(CLI), "run", str(config)], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300
        )
        assert second.returncode == 2, second.stdout + second.stderr
        (line,) = second.stderr.strip().splitlines()
        assert line.startswith(f"error: checkpoint {tables}/checkpoint is in use by another job (host "), line
        assert f"pid {run.pid}, since" in line
        assert secret not in second.stdout + second.stderr
        interrupt(run, log)
    output = log.read_text(errors="replace")

    rows = {role: table_rows(s3, f"{tables}/{name}") for role, name in TABLES.items()}
    assert len(rows["pass"]) + len(rows["quarantine"]) == summary["records"]
    assert rows["results"] and rows["metrics"] and rows["keys"]
    passed_customers = {r["customer_id"] for r in rows["pass"]}
    assert passed_customers and None not in passed_customers  # known to the reference read from the store
    assert not (tmp_path / "data" / "tables").exists()  # nothing went to local disk
    keys = s3.keys("lake", f"orders-{tmp_path.name}/")
    on_store = set(TABLES.values()) | {"reference", "checkpoint"}
    assert {k.split("/")[1] for k in keys} == on_store
    assert not (tmp_path / "data" / "state").exists()
    from deltalake import DeltaTable

    pass_history = DeltaTable(f"{tables}/orders_pass", storage_options=s3.storage_options()).history()
    engines = {
        str(h.get("engineInfo") or h.get("clientVersion", "")).split("/")[0].split("-")[0]
        for h in pass_history
    }
    assert ("Apache" in engines) == (writer == "spark"), engines  # Spark's writer committed through S3A
    for place, text in [("validate", validated.stdout), ("run output", output), ("/metrics", exposition)] + [
        (f"{role} table", repr(values)) for role, values in rows.items()
    ]:
        assert secret not in text, place
        assert s3.access_key not in text, place


UNSAFE = ("aws_conditional_put: etag ", 'AWS_S3_ALLOW_UNSAFE_RENAME: "true" ')


@pytest.mark.parametrize(
    ("what", "tables", "secret", "edit", "reason", "field"),
    [
        ("bucket", "s3://no-such-bucket/orders", None, None, "bucket 'no-such-bucket' does not exist",
         "targets.pass"),
        # #42: a wrong secret was reported on targets.pass; it is the option's fault, named as written
        ("secret", "s3://lake/orders-secret", "PLANTED-wrong-secret-0123", None, "refused the secret key",
         "storage-options.AWS_SECRET_ACCESS_KEY"),
        ("unsafe", "s3://lake/orders-unsafe", None, UNSAFE, "AWS_S3_ALLOW_UNSAFE_RENAME lets two writers",
         "targets.pass"),
    ],
)  # fmt: skip
def test_a_wrong_bucket_secret_or_commit_mode_ends_the_job_before_its_first_batch_with_one_line(
    tmp_path: Path,
    s3: S3Server,
    what: str,
    tables: str,
    secret: str | None,
    edit: tuple[str, str] | None,
    reason: str,
    field: str,
):
    config, _ = make_orders_job(tmp_path, batches=1, rows=10)
    on_the_store(config, s3, tables)
    if edit is not None:
        assert edit[0] in config.read_text()
        config.write_text(config.read_text().replace(*edit))
    done = subprocess.run(
        [str(CLI), "run", str(config), "--timeout", "120"],
        capture_output=True,
        text=True,
        env=cli_env(s3, secret),
        cwd=tmp_path,
        timeout=300,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    errors = [line for line in output.splitlines() if reason in line]
    assert len(errors) == 1 and f"orders.yaml: {field}: " in errors[0], output
    assert "batch " not in output and not (tmp_path / "data" / "state").exists(), output  # before Spark ran
    assert s3.secret_key not in output and (secret is None or secret not in output), output


def test_spark_s_log_store_on_s3_refuses_a_version_another_writer_took(spark, s3):
    """The LogStore Spark's writer commits through on S3 (``S3ConditionalLogStore``, compiled from our source):
    creating a log file that exists is refused by the store (a conditional write), which Delta reads as "that
    version is taken: check for conflicts and commit the next". delta-rs commits the same way, so a version a
    delta-rs writer took is refused to Spark too, and the other way round."""
    from deltalake import write_deltalake

    from streaming_dq.runtime.jvm import LOG_STORE_CLASS
    from streaming_dq.tables.storage import hadoop_options

    assert (
        spark.conf.get("spark.delta.logStore.s3a.impl") == LOG_STORE_CLASS
    )  # the test session's, as a job's
    import pyarrow as pa

    table = "s3://lake/log-store-race"
    write_deltalake(table, pa.table({"id": [1]}), storage_options=s3.storage_options())  # version 0, delta-rs
    jvm, conf = spark._jvm, spark._jsc.hadoopConfiguration()
    for key, value in hadoop_options(table, s3.storage_options()).items():
        conf.set(key, value)
    store = jvm.io.streamingdq.delta.S3ConditionalLogStore(conf)

    def commit(version: int) -> str | None:
        path = jvm.org.apache.hadoop.fs.Path(f"s3a://lake/log-store-race/_delta_log/{version:020d}.json")
        lines = jvm.java.util.ArrayList()
        lines.add('{"commitInfo":{"operation":"TEST"}}')
        try:
            store.write(path, lines.iterator(), False, conf)
        except Exception as exc:  # py4j's error: the Java exception's class is in its text
            return str(exc)
        return None

    taken = commit(0)  # delta-rs's version 0
    assert taken is not None and "java.nio.file.FileAlreadyExistsException" in taken, taken
    assert commit(1) is None  # a free version is written
    again = commit(1)
    assert again is not None and "java.nio.file.FileAlreadyExistsException" in again, again
    log = [k for k in s3.keys("lake", "log-store-race/_delta_log/") if k.endswith(".json")]
    assert log == ["log-store-race/_delta_log/00000000000000000000.json",
                   "log-store-race/_delta_log/00000000000000000001.json"]  # fmt: skip
    assert "TEST" not in read_s3_text(
        s3, "log-store-race/_delta_log/00000000000000000000.json"
    )  # not overwritten
    # refused by the store itself (412 to the conditional PUT), not by a look first that another writer could race
    assert s3.log is not None
    plain = re.sub(r"\x1b\[[0-9;]*m", "", s3.log.read_text(errors="replace"))  # the server colours errors
    refused = [
        line for line in plain.splitlines()
        if '"PUT /lake/log-store-race/_delta_log/00000000000000000001.json' in line and '" 412 ' in line
    ]  # fmt: skip
    assert len(refused) == 1, s3.log.read_text(errors="replace")[-2000:]


def read_s3_text(s3: S3Server, key: str) -> str:
    return s3.client().get_object(Bucket="lake", Key=key)["Body"].read().decode()


def test_an_azure_container_or_key_the_store_refuses_is_one_line_without_the_key(azure):
    """On Azure Blob Storage (Azurite) the preflight's answers: a missing container and a wrong key each one
    line naming the store's code, the key in neither (the gate then exits 2 before any batch, as on S3)."""
    from streaming_dq.devtools.local_azure import AzureServer
    from streaming_dq.tables.storage import store_problem

    server: AzureServer = azure
    options = server.storage_options()
    assert store_problem("az://lake/orders", options) is None
    missing = store_problem("az://nowhere/orders", options)
    wrong = dict(options, AZURE_STORAGE_ACCOUNT_KEY="QUJD" + options["AZURE_STORAGE_ACCOUNT_KEY"][4:])
    refused = store_problem("az://lake/orders", wrong)
    assert missing is not None and "ContainerNotFound" in missing and "\n" not in missing, missing
    assert refused is not None and "AuthorizationFailure" in refused and "\n" not in refused, refused
    assert all(options["AZURE_STORAGE_ACCOUNT_KEY"][10:30] not in text for text in (missing, refused))
    assert all(wrong["AZURE_STORAGE_ACCOUNT_KEY"][10:30] not in text for text in (missing, refused))


def test_a_contract_on_the_store_is_read_with_the_configs_storage_options_and_a_wrong_key_is_one_line(
    tmp_path: Path, s3: S3Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#59: ``contract: {path: s3://...}`` is read from the store with the gate-wide storage options; a wrong
    secret fails validation in one line naming the contract's URL, without the secret."""
    from streaming_dq.config.loader import inspect_gate_config

    contract = Path(__file__).resolve().parents[2] / "jobs" / "orders" / "orders.odcs.yaml"
    key = f"contracts-{tmp_path.name}/orders.odcs.yaml"
    s3.client().upload_file(str(contract), "lake", key)
    (tmp_path / "landing").mkdir()
    config = tmp_path / "gate.yaml"
    config.write_text(
        "gate: {name: g, event-time: order_ts}\n"
        "source: {format: json, path: landing, schema: 'order_id STRING, order_ts TIMESTAMP, customer_id STRING, "
        "amount DOUBLE, currency STRING, status STRING, channel STRING, items INT'}\n"
        "checkpoint: state\n"
        "targets: {pass: t/pass, quarantine: t/quarantine}\n"
        f"contract: {{path: 's3://lake/{key}', schema: orders}}\n" + STORAGE.format(endpoint=s3.endpoint),
        encoding="utf-8",
    )
    for name, value in cli_env(s3).items():
        monkeypatch.setenv(name, value)
    loaded, problems = inspect_gate_config(config)
    assert not problems and loaded is not None, [str(p) for p in problems]
    mapping = loaded.contract_mapping
    assert (mapping.contract_id, mapping.version, len(mapping.rules)) == (
        "urn:datacontract:shop:orders",
        "1.2.0",
        20,
    )
    assert mapping.source == f"s3://lake/{key}"
    wrong = "not-the-secret-0123456789"
    monkeypatch.setenv("DQ_S3_SECRET", wrong)
    _, problems = inspect_gate_config(config)
    [problem] = problems
    assert problem.source == f"s3://lake/{key}" and problem.reason.startswith("cannot read the contract: ")
    assert wrong not in str(problem) and s3.secret_key not in str(problem)
