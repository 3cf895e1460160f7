"""A single-node Apache Kafka broker on 127.0.0.1, for the Kafka demo, the Kafka job's README and the tests.

Apache Kafka itself in KRaft mode (one process is broker and controller), from the JARs ``make jars`` fetched
from Maven Central (the ``kafka-broker`` bundle: ``org.apache.kafka:kafka_2.13`` and what it needs). No Docker,
no download at run time: :func:`local_broker` writes a ``server.properties``, formats the storage
(``kafka.tools.StorageTool format --standalone``), starts ``kafka.Kafka`` in a process group of its own, waits
until the port answers, and stops it (SIGTERM, then SIGKILL) when the block ends.

This is a development broker: replication factor 1, data in a temporary folder. Production streams point
``source.bootstrap-servers`` at their own cluster.

Example:
    >>> with local_broker(Path("/tmp/kafka")) as bootstrap:  # doctest: +SKIP
    ...     print(bootstrap)  # 127.0.0.1:40123
"""

from __future__ import annotations

import base64
import os
import shutil
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from streaming_dq.exceptions import ConfigError, LocalBrokerError, LocalServerError

__all__ = ["broker_classpath", "free_port", "local_broker", "log_tail", "stop_group"]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def broker_classpath() -> str:
    """The broker's classpath: the fetched ``kafka-broker`` bundle.

    Raises:
        ConfigError: the bundle was not fetched (``make jars`` or ``python -m streaming_dq.runtime.jvm fetch
            kafka-broker`` does it).
    """
    from streaming_dq.runtime.jvm import bundle_jars, jars_home

    jars = bundle_jars("kafka-broker")
    if jars is None:
        raise ConfigError(
            f"no Kafka broker JARs in {jars_home() / 'kafka-broker'}: run `make jars` "
            "(or python -m streaming_dq.runtime.jvm fetch kafka-broker)"
        )
    return os.pathsep.join(str(j) for j in jars)


def _java() -> str:
    home = os.environ.get("JAVA_HOME")
    java = str(Path(home, "bin", "java")) if home else shutil.which("java")
    if not java or not Path(java).exists():
        raise ConfigError("no `java` on the PATH (Kafka 4 needs Java 17 or newer)")
    return java


def _properties(data: Path, port: int, controller_port: int, partitions: int) -> str:
    settings = {
        "process.roles": "broker,controller",
        "node.id": "1",
        "controller.quorum.bootstrap.servers": f"127.0.0.1:{controller_port}",
        "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        "log.dirs": str(data),
        "num.partitions": str(partitions),
        "offsets.topic.replication.factor": "1",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "share.coordinator.state.topic.replication.factor": "1",
        "share.coordinator.state.topic.min.isr": "1",
        "group.initial.rebalance.delay.ms": "0",
        "auto.create.topics.enable": "true",
        "log.retention.hours": "-1",
    }
    return "".join(f"{k}={v}\n" for k, v in settings.items())


def _cluster_id() -> str:
    """A Kafka cluster id: a random UUID, URL-safe base64 without padding (what ``kafka-storage random-uuid``
    prints)."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


def stop_group(process: subprocess.Popen[bytes]) -> None:
    """Stop a process started with ``start_new_session=True`` and its children: SIGTERM, SIGKILL after 30 s."""
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(30)


def wait_for_port(name: str, port: int, process: subprocess.Popen[bytes], log: Path, timeout: float) -> None:
    """Wait until server ``name`` (``process``, logging to ``log``) accepts connections on 127.0.0.1:``port``.

    Raises:
        LocalServerError: it exited, or did not answer within ``timeout`` seconds (its log's tail said).
    """
    import socket

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise LocalServerError(f"{name} exited with {process.returncode}:\n{log_tail(log)}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    raise LocalServerError(f"{name} did not answer on port {port} within {timeout:.0f} s:\n{log_tail(log)}")


def log_tail(log: Path, lines: int = 30) -> str:
    """The last ``lines`` lines of a log file, for an error message."""
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


@contextmanager
def local_broker(workdir: Path, *, partitions: int = 2, timeout: float = 120.0) -> Iterator[str]:
    """Run a KRaft broker with its data and log under ``workdir``; yields ``127.0.0.1:<port>``.

    Args:
        workdir: Folder for ``server.properties``, the log segments and ``kafka.log`` (created).
        partitions: Partitions of an auto-created topic.
        timeout: Seconds to wait for the broker to answer.

    Raises:
        ConfigError: no broker JARs or no Java.
        LocalBrokerError: the broker exited or did not answer in time (with the tail of its log).
    """
    workdir.mkdir(parents=True, exist_ok=True)
    java, classpath = _java(), broker_classpath()
    port, controller_port = free_port(), free_port()
    config = workdir / "server.properties"
    config.write_text(_properties(workdir / "data", port, controller_port, partitions), encoding="utf-8")
    log = workdir / "kafka.log"
    heap = ["-Xms256m", "-Xmx512m", "-XX:+UseG1GC", "-Djava.awt.headless=true"]
    with open(log, "ab") as out:
        formatted = subprocess.run(
            [java, *heap, "-cp", classpath, "kafka.tools.StorageTool", "format", "--standalone",
             f"--cluster-id={_cluster_id()}", "-c", str(config), "--ignore-formatted"],
            stdout=out, stderr=subprocess.STDOUT, check=False,
        )  # fmt: skip
        if formatted.returncode != 0:
            raise LocalBrokerError(f"formatting the Kafka storage failed:\n{log_tail(log)}")
        process = subprocess.Popen(
            [java, *heap, "-cp", classpath, "kafka.Kafka", str(config)],
            stdout=out, stderr=subprocess.STDOUT, cwd=workdir, start_new_session=True,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                raise LocalBrokerError(f"the Kafka broker exited with {process.returncode}:\n{log_tail(log)}")
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if time.monotonic() > deadline:
                raise LocalBrokerError(
                    f"the Kafka broker did not answer on {port} in {timeout:.0f} s:\n{log_tail(log)}"
                )
            time.sleep(0.3)
        yield f"127.0.0.1:{port}"
    finally:
        stop_group(process)
