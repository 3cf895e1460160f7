"""SIGKILL a running gate job at random points, restart it on the same checkpoint, and count every row once.

The job (``gate_crash_job.py``) runs in its own process group with its own SparkSession and JVM, reading one
landing file per micro-batch on a processing-time trigger. It is killed twice, each time a moment after
it committed something new (so the kill lands anywhere: mid-validation, between the pass and quarantine
commits, before Spark's checkpoint commit ...), then run to completion with ``availableNow`` (in the test
process, on the test session: the restarted driver). The same with the tables on an S3 server, and with
a Kafka topic as the source, run by ``streaming-dq run`` on the shipped ``jobs/payments_kafka`` config. Afterwards
every input id is in exactly one of the pass and quarantine tables, exactly once.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from streaming_dq.devtools.local_s3 import S3Server
from streaming_dq.tables import read_table
from tests.spark_lines import writers

pytestmark = pytest.mark.integration

JOB = Path(__file__).with_name("gate_crash_job.py")
REPO = Path(__file__).resolve().parents[2]
FILES, ROWS_PER_FILE = 8, 20
KILLS = 1  # locally: the kill inside a maintenance run (the cluster and Kafka tests kill at random)
# A cap that only bounds a stuck run: the test waits for real progress, so its time is that of 3 job starts plus
# ~15 micro-batches (minutes when the machine is oversubscribed, as it was when this was written).
PROGRESS_WAIT_SECONDS = 180  # per kill: JVM start plus one committed batch


def write_landing(landing: Path, files: int = FILES) -> tuple[set[int], set[int]]:
    """Landing files of distinct ids, ``ROWS_PER_FILE`` rows in even files and 5 more in odd ones; every 7th
    row lacks its amount (quarantined)."""
    landing.mkdir()
    failing: set[int] = set()
    first = 0
    for f in range(files):
        lines = []
        size = ROWS_PER_FILE + (5 if f % 2 else 0)
        first, ids = first + size, range(first, first + size)
        for i in ids:
            amount = None if i % 7 == 0 else float(i)
            if amount is None:
                failing.add(i)
            lines.append(json.dumps({"id": i, "amount": amount, "ts": "2025-03-01T00:00:00Z"}))
        (landing / f"part-{f:03d}.json").write_text("\n".join(lines) + "\n")
    return set(range(first)), failing


@contextlib.contextmanager
def job(
    landing: Path, out: Path, trigger: str, log: Path, *options: str
) -> Iterator[subprocess.Popen[bytes]]:
    """The job in its own process group (so a kill takes its JVM too); killed on exit if still running."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYSPARK_PYTHON": sys.executable}
    with log.open("ab") as sink:
        proc = subprocess.Popen(
            [sys.executable, str(JOB), str(landing), str(out), "--trigger", trigger, *options],
            stdout=sink,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)


def batches_committed(out: Path) -> int:
    """Batch commits of the results table, written last in each batch (a cheap progress signal).

    Version 0 is the table's creation by ``gate.start`` before the query runs; counting it as progress once
    made the first kill land in Spark's first offset write (which ``gate.start`` now recovers from, see
    ``test_a_checkpoint_killed_while_planning_batch_0_starts_again``).
    """
    log = out / "results" / "_delta_log"
    return max(len(list(log.glob("*.json"))) - 1, 0) if log.is_dir() else 0


def kill_after_progress(
    proc: subprocess.Popen[bytes], out: Path, rng: random.Random, committed: Callable[[], int] | None = None
) -> None:
    """Wait until the job completes a batch (``committed``: batches so far; those of the results table under
    ``out`` by default), then SIGKILL its process group a random moment later."""
    count = committed or (lambda: batches_committed(out))
    before, deadline = count(), time.monotonic() + PROGRESS_WAIT_SECONDS
    while count() == before and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(rng.uniform(0.0, 1.5))
    os.killpg(proc.pid, signal.SIGKILL)


MAINTAIN_EVERY = 2
MAINTENANCE_TABLES = 3  # pass, quarantine, results


def maintenance_state(log: Path) -> tuple[int, int]:
    """(maintenance runs started, table lines of the last run) from the job log."""
    lines = log.read_text(errors="replace").splitlines() if log.exists() else []
    starts = [
        i for i, line in enumerate(lines) if line.startswith("streaming_dq.maintenance: maintenance after")
    ]
    if not starts:
        return 0, 0
    tail = lines[starts[-1] + 1 :]
    return len(starts), sum(
        1 for line in tail if line.startswith("streaming_dq.maintenance: ") and " files" in line
    )


def kill_during_maintenance(proc: subprocess.Popen[bytes], log: Path) -> bool:
    """SIGKILL the job as soon as a maintenance run starts; whether the run was still going (fewer table lines
    than tables in the log: the kill landed inside a compaction or checkpoint)."""
    before, deadline = maintenance_state(log)[0], time.monotonic() + PROGRESS_WAIT_SECONDS
    while maintenance_state(log)[0] == before and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    started, tables = maintenance_state(log)
    return started > before and tables < MAINTENANCE_TABLES


def read_ids(path: Path) -> Counter[int]:

    return Counter(read_table(str(path)).column("id").to_pylist())


@pytest.mark.parametrize(
    ("where", "files", "kills"),
    [  # the tiers kill the local delta-rs job (#56); Spark's writer with kills runs in the main suite (2 min)
        pytest.param("local-delta-rs", FILES, KILLS, marks=[pytest.mark.compat, pytest.mark.edges]),
        *([("cluster-spark-writer", 4, 1)] if writers("cluster-spark-writer") else []),
    ],
)
def test_sigkill_at_random_points_then_restart_keeps_every_row_exactly_once(
    tmp_path, request, where, files, kills
):
    """Locally with delta-rs and the driver router; on a standalone cluster with Spark's Delta writer and the
    Spark router, batches of 20 rows on the driver and of 25 on the executors (the driver killed, its
    executors released by the master, a new driver on the same checkpoint; fewer files there: a large batch
    costs ~9 cluster jobs). Four files there, not two: a 20-row batch commits on the driver well within the
    kill's random delay, so with two files all three tries once landed after the last batch (CI, seed
    802482168); with four, an executor batch of seconds is still ahead when the kill lands."""
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    landing, out, log = tmp_path / "landing", tmp_path / "out", tmp_path / "job.log"
    everything, failing = write_landing(landing, files)
    options: tuple[str, ...] = ("--maintain-every", str(MAINTAIN_EVERY))
    if where == "cluster-spark-writer":
        cluster = request.getfixturevalue("cluster_url")
        # batches of 20 rows are validated and committed on the driver (delta-rs), those of 25 by the
        # executors (Spark's writer): both writers commit to the same tables across the kills
        options = ("--master", cluster, "--writer", "spark", "--routing", "distributed")
        options += ("--driver-commit-rows", str(ROWS_PER_FILE))
    else:  # the first kill lands inside the gate's own maintenance (compaction between batches); retried
        # when the run finished before the kill (it takes a fraction of a second), which is rare
        for _ in range(3):
            with job(landing, out, "processing-time", log, *options) as proc:
                if kill_during_maintenance(proc, log):
                    break
        else:
            pytest.fail(f"no kill landed during maintenance in 3 tries\n{log.read_text()[-3000:]}")
        kills -= 1

    for _attempt in range(3):  # a kill that lands after the last batch proves nothing: again, on fresh tables
        for _ in range(kills):
            with job(landing, out, "processing-time", log, *options) as proc:
                kill_after_progress(proc, out, rng)
        killed_at = batches_committed(out)
        if killed_at < files or where != "cluster-spark-writer":
            break
        shutil.rmtree(out)
    # the restart: a new driver on the same checkpoint and tables, in this process and the test session (on
    # local[2] also after the cluster run: a driver restarted elsewhere; it saves a JVM start per test)
    local_options = options[2:] if options[:1] == ("--master",) else options
    request.getfixturevalue("spark")
    import gate_crash_job

    assert gate_crash_job.main([str(landing), str(out), "--trigger", "available-now", *local_options]) == 0

    passed, quarantined = read_ids(out / "pass"), read_ids(out / "quarantine")
    context = f"seed {seed}; job log:\n{log.read_text()[-3000:]}"
    assert passed + quarantined == Counter(everything), context  # each id once, nothing lost
    assert set(quarantined) == failing, context
    assert 0 < killed_at < batches_committed(out), context  # the kills landed mid-stream
    if (
        where == "cluster-spark-writer"
    ):  # both writers committed to the same tables, each batch by the one its
        # size calls for (how many files a restarted available-now batch takes varies: two files of 20 rows make
        # one batch of 40, which the executors commit, so which writers appear is the sizes', not a constant)
        from tests.spark.test_gate_support import batch_writers

        sizes = {
            r["batch_id"]: r["rows"]
            for r in read_table(str(out / "results")).to_pylist()
            if r["kind"] == "batch"
        }
        writers = batch_writers(out / "pass")
        assert set(writers) == set(sizes), context
        assert writers == {
            b: "delta-rs" if n <= ROWS_PER_FILE else "Apache-Spark" for b, n in sizes.items()
        }, context
    if where == "local-delta-rs":  # the maintenance went on after the kills: the tables stay compact
        from deltalake import DeltaTable

        table = DeltaTable(str(out / "pass"))
        assert "OPTIMIZE" in [h["operation"] for h in table.history()], context
        assert len(table.file_uris()) < files, context  # one file per batch without compaction


def test_sigkill_with_ids_unique_across_batches_quarantines_each_resent_row_once(tmp_path, request):
    """Each landing file re-sends the last 3 rows of the one before (a producer's retry): killed once at
    random, then run to the end, every row is in one table once, and exactly the re-sent copies are
    quarantined as seen before (#44: the keys table in the batch's commit series)."""
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    landing, out, log = tmp_path / "landing", tmp_path / "out", tmp_path / "job.log"
    everything, failing = write_landing(landing, 6)
    files = sorted(landing.glob("part-*.json"))
    originals = [f.read_text().splitlines() for f in files]
    resent: list[int] = []
    for lines, after in zip(originals, files[1:], strict=False):
        resent += [json.loads(line)["id"] for line in lines[-3:]]
        after.write_text("\n".join(lines[-3:] + originals[files.index(after)]) + "\n")
    with job(landing, out, "processing-time", log, "--keys") as proc:
        kill_after_progress(proc, out, rng)
    killed_at = batches_committed(out)
    request.getfixturevalue("spark")
    import gate_crash_job

    assert gate_crash_job.main([str(landing), str(out), "--trigger", "available-now", "--keys"]) == 0

    context = f"seed {seed}; job log:\n{log.read_text()[-3000:]}"
    passed, quarantined = read_ids(out / "pass"), read_ids(out / "quarantine")
    assert passed + quarantined == Counter(everything) + Counter(resent), context
    assert set(passed) == everything - failing and max(passed.values()) == 1, context
    rows = read_table(str(out / "quarantine")).to_pylist()
    copies = [r for r in rows if r["_dq_first_seen"]]
    assert sorted(r["id"] for r in copies) == sorted(resent), context
    # the original came in an earlier batch, or in the same one when the restart read both files at once
    assert all(r["_dq_first_seen"][0]["batch_id"] <= r["_dq_batch_id"] for r in copies), context
    assert 0 < killed_at < batches_committed(out), context


@pytest.mark.parametrize("writer", ["delta-rs", "spark"])
def test_sigkill_a_job_writing_to_the_object_store_then_restart_keeps_every_row_exactly_once(
    tmp_path: Path, request: pytest.FixtureRequest, s3: S3Server, monkeypatch: pytest.MonkeyPatch, writer: str
) -> None:
    """The tables on the S3 server: delta-rs commits by conditional put with the checkpoint on local disk;
    Spark's writer commits through S3A (Spark router, every write through Spark) with the checkpoint on the
    store too. Kills at random moments, a restart, every row in exactly one table once."""
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    landing, out, log = tmp_path / "landing", tmp_path / "out", tmp_path / "job.log"
    # Spark's writer through S3A costs seconds a batch here: fewer files and one kill
    files, kills = (FILES, 2) if writer == "delta-rs" else (4, 1)
    everything, failing = write_landing(landing, files)
    prefix = f"crash-{seed}"
    options = s3.storage_options()
    monkeypatch.setenv("CRASH_JOB_STORAGE_OPTIONS", json.dumps(options))
    tables: tuple[str, ...] = ("--tables", f"s3://lake/{prefix}", "--maintain-every", str(MAINTAIN_EVERY))
    if writer == "spark":
        tables = ("--tables", f"s3a://lake/{prefix}", "--checkpoint", f"s3a://lake/{prefix}/checkpoint")
        tables += ("--writer", "spark", "--routing", "distributed", "--driver-commit-rows", "0")

    def committed() -> int:
        return max(sum(k.endswith(".json") for k in s3.keys("lake", f"{prefix}/results/_delta_log/")) - 1, 0)

    for _ in range(kills):
        with job(landing, out, "processing-time", log, *tables) as proc:
            kill_after_progress(proc, out, rng, committed)
    killed_at = committed()
    request.getfixturevalue("spark")
    import gate_crash_job

    assert gate_crash_job.main([str(landing), str(out), "--trigger", "available-now", *tables]) == 0

    def ids(role: str) -> Counter[int]:
        return Counter(
            read_table(f"s3://lake/{prefix}/{role}", storage_options=options).column("id").to_pylist()
        )

    passed, quarantined = ids("pass"), ids("quarantine")
    context = f"seed {seed}; job log:\n{log.read_text()[-3000:]}"
    assert passed + quarantined == Counter(everything), context
    assert set(quarantined) == failing, context
    assert 0 < killed_at < committed(), context
    assert not (out / "pass").exists()  # the tables went to the store, not to local disk
    if writer == "spark":
        assert not (out / "checkpoint").exists() and s3.keys("lake", f"{prefix}/checkpoint/offsets/")
    assert s3.secret_key not in log.read_text(errors="replace")


def test_sigkill_a_kafka_job_run_by_the_cli_then_restart_keeps_every_message_exactly_once(
    tmp_path: Path, kafka_bootstrap: str, request: pytest.FixtureRequest
) -> None:
    """``streaming-dq run jobs/payments_kafka/payments.yaml`` over 480 generated messages (good ones, 4
    undecodable, some with undeclared fields), 100 per batch, SIGKILLed once a random moment after a batch
    committed (one CLI start here is ~25 s of the suite), then run to the
    end: pass + quarantine hold every message once (by partition and offset), the
    undecodable ones with their coordinates. Spark's Kafka offsets live in the checkpoint; a batch replayed
    after a kill writes nothing twice (the tables' application transactions)."""
    sys.path.insert(0, str(REPO / "jobs" / "payments_kafka"))
    from generate import produce  # type: ignore[import-not-found]

    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    topic = f"payments-crash-{seed}"
    produced = produce(kafka_bootstrap, topic, 480, seed=5)  # 4 undecodable: offsets 101, 223, 347, 461
    folder = tmp_path / "payments_kafka"
    folder.mkdir()
    config = folder / "payments.yaml"
    text = (REPO / "jobs" / "payments_kafka" / "payments.yaml").read_text(encoding="utf-8")
    config.write_text(text.replace("max-offsets-per-trigger: 1000", "max-offsets-per-trigger: 100"))
    assert "max-offsets-per-trigger: 100" in config.read_text()
    tables, log = folder / "data" / "tables", tmp_path / "job.log"
    env = {**os.environ, "KAFKA_BOOTSTRAP": kafka_bootstrap, "KAFKA_TOPIC": topic}
    cli = [str(Path(sys.executable).with_name("streaming-dq")), "run", str(config)]

    def committed() -> int:
        results = tables / "payments_results" / "_delta_log"
        return max(len(list(results.glob("*.json"))) - 1, 0) if results.is_dir() else 0

    with log.open("ab") as sink:
        proc = subprocess.Popen(cli, stdout=sink, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        before, deadline = committed(), time.monotonic() + PROGRESS_WAIT_SECONDS
        while committed() == before and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(rng.uniform(0.0, 1.5))
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    killed_at = committed()
    # the restart, in this process and the test session (its Kafka reader JARs are loaded): no JVM start
    from typer.testing import CliRunner

    from streaming_dq.cli.main import app

    request.getfixturevalue("spark")
    final = CliRunner().invoke(
        app,
        ["run", str(config), "--fail-on", "never"],
        env={"KAFKA_BOOTSTRAP": kafka_bootstrap, "KAFKA_TOPIC": topic},
    )
    context = f"seed {seed}; job log:\n{log.read_text()[-3000:]}\nfinal run:\n{final.stdout[-2000:]}{final.stderr[-2000:]}"
    assert final.exit_code == 0, context

    passed = read_table(str(tables / "payments_pass")).to_pylist()
    quarantined = read_table(str(tables / "payments_quarantine")).to_pylist()
    coordinates = Counter((r["kafka_partition"], r["kafka_offset"]) for r in passed + quarantined)
    assert sum(coordinates.values()) == produced.messages == len(coordinates), context  # each once
    malformed = [r for r in quarantined if [e["check-id"] for e in r["_dq_errors"]] == ["malformed-record"]]
    assert len(malformed) == produced.undecodable == 4, context
    assert all(r["kafka_topic"] == topic and r["kafka_key"] for r in malformed), context
    undeclared = [r for r in passed if r["_unknown_fields"] is not None]
    assert len(undeclared) == produced.faults["undeclared-field"], context
    assert 0 < killed_at < committed(), context  # the kills landed mid-stream
