"""Real servers on 127.0.0.1 for the tests, started from pyspark's own scripts (no download, no Docker).

* :func:`connect_server`: a Spark Connect server (``spark-submit --class ...SparkConnectServer``) on
  ``local[2]`` with the delta-spark JARs; clients connect with ``sc://127.0.0.1:<port>``.
* :func:`standalone_cluster`: a Spark standalone master and one worker (``bin/spark-class``); a driver started
  with ``master("spark://127.0.0.1:<port>")`` then has executors in JVMs of their own.

Both are context managers; tests/conftest.py holds one of each per test session, started on first use.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pyspark

from streaming_dq.devtools.local_kafka import free_port, log_tail, stop_group

SPARK_HOME = Path(pyspark.__file__).parent


def wait_for_port(port: int, process: subprocess.Popen[bytes], log: Path, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"exited with {process.returncode} before listening on {port}:\n{log_tail(log)}"
            )
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.5)
    raise TimeoutError(f"nothing listens on {port} after {timeout} s:\n{log_tail(log)}")


def spark_env() -> dict[str, str]:
    """The environment of a JVM started here: pyspark's Spark home, this interpreter for Python workers."""
    return {
        **os.environ,
        "SPARK_HOME": str(SPARK_HOME),
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
        "SPARK_LOCAL_IP": "127.0.0.1",
    }


@contextmanager
def connect_server(workdir: Path, delta_conf: dict[str, str]) -> Iterator[str]:
    """A Spark Connect server on a free port; yields its ``sc://`` URL."""
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    conf = {
        **delta_conf,
        "spark.connect.grpc.binding.address": "127.0.0.1",
        "spark.connect.grpc.binding.port": str(port),
        "spark.sql.shuffle.partitions": "2",
        "spark.sql.session.timeZone": "UTC",
        "spark.ui.enabled": "false",
        "spark.driver.memory": "1g",
    }
    from streaming_dq.runtime.jvm import bundle_jars

    server = bundle_jars("connect")  # Spark 3.5: the server's JARs from Maven (pyspark ships them since 4.0)
    if server is None:
        raise RuntimeError("the Spark Connect server's JARs are not fetched: jvm fetch connect")
    if server:
        conf["spark.jars"] = ",".join([j for j in (conf.get("spark.jars"),) if j] + [str(j) for j in server])
    args = [str(SPARK_HOME / "bin" / "spark-submit"), "--master", "local[2]",
            "--class", "org.apache.spark.sql.connect.service.SparkConnectServer"]  # fmt: skip
    for key, value in conf.items():
        args += ["--conf", f"{key}={value}"]
    log = workdir / "connect-server.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [*args, "spark-internal"], stdout=out, stderr=subprocess.STDOUT, env=spark_env(), cwd=workdir,
            start_new_session=True,
        )  # fmt: skip
    try:
        wait_for_port(port, process, log)
        yield f"sc://127.0.0.1:{port}"
    finally:
        stop_group(process)


@contextmanager
def standalone_cluster(workdir: Path, *, cores: int = 2, memory: str = "3g") -> Iterator[str]:
    """A Spark standalone master and one worker on free ports; yields the master's ``spark://`` URL."""
    workdir.mkdir(parents=True, exist_ok=True)
    spark_class = str(SPARK_HOME / "bin" / "spark-class")
    port, ui, worker_ui = free_port(), free_port(), free_port()
    started: list[subprocess.Popen[bytes]] = []
    try:
        master_log = workdir / "master.log"
        with open(master_log, "wb") as out:
            master = subprocess.Popen(
                [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                 "--port", str(port), "--webui-port", str(ui)],
                stdout=out, stderr=subprocess.STDOUT, env=spark_env(), cwd=workdir, start_new_session=True,
            )  # fmt: skip
        started.append(master)
        wait_for_port(port, master, master_log)
        url = f"spark://127.0.0.1:{port}"
        worker_log = workdir / "worker.log"
        env = {**spark_env(), "SPARK_WORKER_DIR": str(workdir / "work")}
        with open(worker_log, "wb") as out:
            worker = subprocess.Popen(
                [spark_class, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                 "--cores", str(cores), "--memory", memory, "--webui-port", str(worker_ui), url],
                stdout=out, stderr=subprocess.STDOUT, env=env, cwd=workdir, start_new_session=True,
            )  # fmt: skip
        started.append(worker)
        _wait_for_worker(worker_log, worker)
        yield url
    finally:
        for process in reversed(started):
            stop_group(process)


def _wait_for_worker(log: Path, worker: subprocess.Popen[bytes], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if worker.poll() is not None:
            raise RuntimeError(f"the worker exited with {worker.returncode}:\n{log_tail(log)}")
        if "Successfully registered with master" in log.read_text(errors="replace"):
            return
        time.sleep(0.5)
    raise TimeoutError(f"the worker did not register with the master:\n{log_tail(log)}")


@contextmanager
def running(command: list[str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A server process writing to ``log``; terminated (killed after 15 s) on exit."""
    with log.open("wb") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
    try:
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)
