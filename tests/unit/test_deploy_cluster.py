"""The cluster deployment files and the docs stay consistent (no JVM, no cluster, no network).

What a cluster would run cannot be tested here (the delta-spark JARs come from Maven, which is unreachable), so
these tests hold what can be checked: the manifests parse and agree with each other, the wrapper script is valid
bash and assembles the expected spark-submit command, the delta-spark Maven coordinate matches the versions
pinned in pyproject.toml, the example job config loads, and every relative link in docs/ resolves.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from streaming_dq.compat.artifacts import spark_line
from streaming_dq.config.loader import load_gate_config

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "deploy/k8s"
SUBMIT = ROOT / "deploy/spark/submit.sh"
DOCS = ROOT / "docs"
COORDINATE = re.compile(
    r"io\.delta:delta-spark_(?:(?P<spark>\d+\.\d+)_)?(?P<scala>\d+\.\d+):(?P<delta>[0-9][\w.-]*)"
)
DELTA_EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"
ALERT_JOB = "streaming_dq"


def manifests() -> dict[str, dict[str, Any]]:
    """Every document under deploy/k8s, by kind."""
    by_kind: dict[str, dict[str, Any]] = {}
    for path in sorted(K8S.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            by_kind[doc["kind"]] = doc
    return by_kind


def submit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(SUBMIT), *args], capture_output=True, text=True, timeout=60, check=False, cwd=ROOT
    )


# --- manifests -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted(K8S.glob("*.yaml")), ids=lambda p: p.name)
def test_every_k8s_manifest_parses_as_kubernetes_objects(path: Path) -> None:
    docs = list(yaml.safe_load_all(path.read_text(encoding="utf-8")))

    assert docs
    for doc in docs:
        assert {"apiVersion", "kind", "metadata"} <= doc.keys(), path.name
        assert doc["metadata"]["name"], path.name


def test_the_k8s_example_has_the_operator_app_its_config_and_its_scrape() -> None:
    assert manifests().keys() >= {"SparkApplication", "ConfigMap", "Service", "ServiceMonitor"}


def test_the_spark_application_mounts_the_config_map_and_runs_its_job() -> None:
    m = manifests()
    app, config_map = m["SparkApplication"]["spec"], m["ConfigMap"]
    [volume] = [
        v for v in app["volumes"] if v.get("configMap", {}).get("name") == config_map["metadata"]["name"]
    ]
    [mount] = [vm for vm in app["driver"]["volumeMounts"] if vm["name"] == volume["name"]]

    assert app["type"] == "Python"
    assert app["mainApplicationFile"].endswith("/driver.py")
    assert app["arguments"][0] == f"{mount['mountPath']}/job.yaml"
    assert "job.yaml" in config_map["data"]


def test_the_driver_port_env_annotation_service_and_job_config_agree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    m = manifests()
    driver = m["SparkApplication"]["spec"]["driver"]
    [port] = [p for p in driver["ports"] if p["name"] == "metrics"]
    env = {e["name"]: e.get("value") for e in driver["env"]}
    [service_port] = m["Service"]["spec"]["ports"]
    config = job_config_from_config_map(m["ConfigMap"], env, tmp_path, monkeypatch)

    assert int(env["STREAMING_DQ_METRICS_PORT"]) == port["containerPort"]
    assert int(driver["annotations"]["prometheus.io/port"]) == port["containerPort"]
    assert (service_port["targetPort"], service_port["port"]) == ("metrics", port["containerPort"])
    assert config.metrics.prometheus is not None
    assert (config.metrics.prometheus.host, config.metrics.prometheus.port) == (
        "0.0.0.0",
        port["containerPort"],
    )


def test_the_service_monitor_selects_the_driver_and_names_the_alerts_job() -> None:
    m = manifests()
    driver_labels = {**m["SparkApplication"]["spec"]["driver"]["labels"], "spark-role": "driver"}
    service, monitor = m["Service"], m["ServiceMonitor"]["spec"]
    alerts = (ROOT / "deploy/prometheus/alerts.yml").read_text(encoding="utf-8")

    assert service["spec"]["selector"].items() <= driver_labels.items()
    assert monitor["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    assert [e["port"] for e in monitor["endpoints"]] == [service["spec"]["ports"][0]["name"]]
    assert service["metadata"]["labels"][monitor["jobLabel"]] == ALERT_JOB
    assert f'up{{job="{ALERT_JOB}"}}' in alerts


def job_config_from_config_map(
    config_map: dict[str, Any], env: dict[str, Any], folder: Path, monkeypatch: pytest.MonkeyPatch
) -> Any:
    """Load the ConfigMap's job.yaml with the real loader, in the driver's environment."""
    path = folder / "job.yaml"
    path.write_text(config_map["data"]["job.yaml"], encoding="utf-8")
    for name, value in env.items():
        if value is not None:
            monkeypatch.setenv(name, str(value))
    return load_gate_config(path)


def test_the_config_map_holds_a_valid_job_config_for_spark_s_delta_writer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    m = manifests()
    env = {e["name"]: e.get("value") for e in m["SparkApplication"]["spec"]["driver"]["env"]}
    config = job_config_from_config_map(m["ConfigMap"], env, tmp_path, monkeypatch)

    assert config.targets.writer == "spark"
    assert all(p.startswith(env["DQ_ROOT"]) for p in [config.checkpoint, *config.targets.paths().values()])


def test_spark_s_metric_namespace_is_fixed_and_delta_is_loaded_in_the_spark_application() -> None:
    conf = manifests()["SparkApplication"]["spec"]["sparkConf"]

    assert conf["spark.metrics.namespace"] and "$" not in conf["spark.metrics.namespace"]
    assert conf["spark.sql.extensions"] == DELTA_EXTENSION
    assert conf["spark.sql.session.timeZone"] == "UTC"


# --- the spark-submit wrapper ----------------------------------------------------------------------------


def test_submit_script_is_valid_bash() -> None:
    result = subprocess.run(["bash", "-n", str(SUBMIT)], capture_output=True, text=True, check=False)

    assert result.returncode == 0, result.stderr


def test_submit_script_prints_usage() -> None:
    result = submit("--help")

    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Usage: submit.sh [OPTIONS] CONFIG")


def test_submit_script_refuses_a_bad_port_and_a_missing_config() -> None:
    assert submit("--metrics-port", "70000", "job.yaml").returncode == 2
    assert "missing CONFIG" in submit("--dry-run").stderr


def test_submit_script_builds_the_spark_submit_command() -> None:
    result = submit(
        "--dry-run", "--no-check", "--master", "yarn", "--metrics-port", "9200", "jobs/x/orders.yaml"
    )
    words = result.stdout.split()

    assert result.returncode == 0, result.stderr
    assert words[:3] == ["spark-submit", "--master", "yarn"]
    assert COORDINATE.fullmatch(words[words.index("--packages") + 1])
    confs = {words[i + 1] for i, w in enumerate(words) if w == "--conf"}
    assert {
        f"spark.sql.extensions={DELTA_EXTENSION}",
        "spark.sql.catalog.spark_catalog=org.apache.spark.sql.delta.catalog.DeltaCatalog",
        "spark.metrics.namespace=streaming-dq-orders",
    } <= confs
    assert words[-2:] == [str(ROOT / "deploy/spark/driver.py"), "jobs/x/orders.yaml"]


def test_submit_script_passes_the_metrics_port_to_a_cluster_driver() -> None:
    result = submit(
        "--dry-run", "--no-check", "--deploy-mode", "cluster", "--metrics-port", "9200", "job.yaml"
    )

    assert "spark.kubernetes.driverEnv.STREAMING_DQ_METRICS_PORT=9200" in result.stdout.split()


# --- the delta-spark coordinate ---------------------------------------------------------------------------


def coordinates() -> dict[str, set[str]]:
    """The delta-spark coordinates named in the wrapper script and in the SparkApplication."""
    packages = manifests()["SparkApplication"]["spec"]["deps"]["packages"]
    return {
        "submit.sh": {m.group(0) for m in COORDINATE.finditer(SUBMIT.read_text(encoding="utf-8"))},
        "sparkapplication.yaml": {p for p in packages if COORDINATE.fullmatch(p)},
    }


def test_the_delta_coordinate_is_the_same_in_the_script_and_the_manifest() -> None:
    found = coordinates()

    assert all(len(names) == 1 for names in found.values()), found
    assert len(set.union(*found.values())) == 1, found


def test_the_delta_coordinate_is_the_package_s_for_the_image_s_spark() -> None:
    [name] = set.union(*coordinates().values())
    coordinate = COORDINATE.fullmatch(name)
    assert coordinate is not None
    spark_version = manifests()["SparkApplication"]["spec"]["sparkVersion"]
    delta = spark_line(spark_version).delta

    assert delta is not None and name == delta.coordinate, (name, spark_version)
    # From Delta 4.1 the artifact name carries the Spark major.minor it was built for.
    assert coordinate["spark"] == ".".join(spark_version.split(".")[:2])
    assert coordinate["scala"] == "2.13"


# --- links in docs/ ----------------------------------------------------------------------------------------

FENCE = re.compile(r"^(```|~~~).*?^\1\s*$", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"")


def anchors(markdown: str) -> set[str]:
    """GitHub's heading ids: lower case, punctuation dropped, spaces to hyphens, -1/-2 for repeats."""
    text = FENCE.sub("", markdown)
    seen: dict[str, int] = {}
    out = set(HTML_ANCHOR.findall(text))
    for heading in HEADING.findall(text):
        plain = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
        slug = re.sub(r"[^\w\- ]", "", plain.strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        out.add(slug if count == 0 else f"{slug}-{count}")
    return out


def broken_links(doc: Path) -> list[str]:
    """Relative links of ``doc`` whose file, or whose anchor in a Markdown file, does not exist."""
    text = doc.read_text(encoding="utf-8")
    problems = []
    for target in LINK.findall(CODE_SPAN.sub("", FENCE.sub("", text))):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
            continue  # http:, https:, mailto: ...
        path_part, _, anchor = target.partition("#")
        linked = (doc.parent / path_part).resolve() if path_part else doc
        if not linked.exists():
            problems.append(f"{doc.name}: {target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked.read_text(encoding="utf-8")):
            problems.append(f"{doc.name}: {target}: no heading #{anchor} in {linked.name}")
    return problems


@pytest.mark.parametrize("doc", sorted(DOCS.glob("*.md")), ids=lambda p: p.name)
def test_every_relative_link_in_docs_resolves(doc: Path) -> None:
    assert broken_links(doc) == []


def test_the_link_check_catches_missing_files_and_anchors(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other page\n\n## A `code` heading\n", encoding="utf-8")
    doc = tmp_path / "doc.md"
    doc.write_text(
        "# Doc\n[ok](other.md) [ok](other.md#a-code-heading) [ok](#doc) [web](https://example.com/x)\n"
        "[gone](missing.md) [bad anchor](other.md#nope) `[in code](nowhere.md)`\n"
        "```\n[in a fence](nowhere.md)\n```\n",
        encoding="utf-8",
    )

    assert broken_links(doc) == [
        "doc.md: missing.md: no such file",
        "doc.md: other.md#nope: no heading #nope in other.md",
    ]
