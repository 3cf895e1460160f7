#!/usr/bin/env bash
# Run a streaming_dq gate job on a Spark cluster, writing with Spark's Delta writer (txnAppId/txnVersion).
#
# tests/integration/test_cluster.py runs it against a Spark standalone cluster on 127.0.0.1 (with the JARs
# `make jars` fetched; --packages resolves them from Maven Central instead). See docs/deploy.md.
set -euo pipefail

# The delta-spark Maven coordinate for the Spark of deploy/k8s/sparkapplication.yaml's image (4.2): one row of
# streaming_dq/compat/artifacts.py's SPARK_LINES (`python -m streaming_dq.runtime.jvm coordinates delta` prints
# the row of the pyspark beside it). From Delta 4.1 the artifact name carries the Spark major.minor; Spark 3.5
# takes Delta 3.3.2 for Scala 2.12, and no Delta release supports Spark 4.3 (docs/deploy.md, "Spark
# versions"): pass --delta-package for another Spark. tests/unit/test_deploy_cluster.py keeps this in step
# with the table and the manifest.
readonly DELTA_PACKAGE_DEFAULT="io.delta:delta-spark_4.2_2.13:4.4.0"
readonly DELTA_EXTENSION="io.delta.sql.DeltaSparkSessionExtension"
readonly DELTA_CATALOG="org.apache.spark.sql.delta.catalog.DeltaCatalog"
readonly METRICS_PORT_VARIABLE="STREAMING_DQ_METRICS_PORT"

script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
readonly script_dir

usage() {
  cat <<EOF
Usage: $(basename "$0") [OPTIONS] CONFIG [-- SPARK_SUBMIT_ARGS...]

Submit a streaming_dq gate job: spark-submit runs deploy/spark/driver.py, which runs
'streaming-dq run CONFIG' inside the SparkSession spark-submit configured.

The wrapper adds:
  --packages ${DELTA_PACKAGE_DEFAULT}
  --conf spark.sql.extensions=${DELTA_EXTENSION}
  --conf spark.sql.catalog.spark_catalog=${DELTA_CATALOG}
  --conf spark.sql.session.timeZone=UTC, spark.sql.execution.arrow.pyspark.enabled=true
  --conf spark.metrics.namespace=APP_NAME   (fixed, so Spark's own metric names survive restarts)
  ${METRICS_PORT_VARIABLE}=PORT in the driver's environment

CONFIG is a gate config (YAML). Its targets.writer should be 'spark' (or 'auto', which picks Spark's
Delta writer once the Delta extension is loaded). In cluster deploy mode CONFIG is read on the driver's
host: give the path as the driver sees it (Kubernetes: a mounted ConfigMap; YARN: ship the file with
'-- --files job.yaml' and pass 'job.yaml'). When CONFIG also exists here, it is checked first without
Spark (writer, metrics endpoint).

Options:
  --master URL          Spark master (default: \$SPARK_MASTER, else spark-submit's own default)
  --deploy-mode MODE    client (default) or cluster
  --name NAME           Spark application name (default: streaming-dq-<gate name>)
  --metrics-port PORT   Port the driver serves /metrics on (default: 9108). Exported to the driver as
                        ${METRICS_PORT_VARIABLE}; the config uses it with
                        'port: \${${METRICS_PORT_VARIABLE}:-9108}' under metrics.prometheus.
  --delta-package COORD Maven coordinate of delta-spark (default: ${DELTA_PACKAGE_DEFAULT});
                        'none' when the Delta JARs are already on the cluster's classpath.
  --fetched-jars        Ship the delta-spark JARs 'make jars' fetched (python -m streaming_dq.runtime.jvm fetch
                        delta; \$STREAMING_DQ_JARS) with --jars instead of resolving --packages: offline.
  --driver-script PATH  driver.py as spark-submit should see it (default: ${script_dir}/driver.py;
                        e.g. local:///opt/streaming-dq/driver.py inside an image)
  --available-now       Drain what the source holds, then stop (streaming-dq run --available-now)
  --timeout DURATION    Stop the stream after this long: 300, '5 min' (streaming-dq run --timeout)
  --fail-on LEVEL       Exit 1 when a check of this severity failed: critical (default), warning, never
                        (streaming-dq run --fail-on; a stream that fails exits 1 whatever the level)
  --no-check            Do not check CONFIG locally before submitting
  --dry-run             Print the spark-submit command instead of running it
  -h, --help            Print this help

Arguments after '--' go to spark-submit unchanged and after the wrapper's own, so a --conf given there
overrides the wrapper's value for the same key.

Environment:
  SPARK_SUBMIT          spark-submit executable (default: spark-submit on PATH)
  PYTHON                Python with streaming-dq installed, for the local check and, in client mode, the
                        driver (default: python3); PYSPARK_DRIVER_PYTHON, when set, wins for the driver
EOF
}

die() {
  printf '%s: error: %s\n' "$(basename "$0")" "$1" >&2
  printf "Try '%s --help'.\n" "$(basename "$0")" >&2
  exit 2
}

warn() {
  printf '%s: warning: %s\n' "$(basename "$0")" "$1" >&2
}

# Prints "gate-name<TAB>writer<TAB>metrics-host<TAB>metrics-port" of a config, without starting Spark.
describe_config() {
  "${python}" - "$1" <<'PY'
import sys

from streaming_dq.config.loader import load_gate_config
from streaming_dq.exceptions import ConfigError

try:
    config = load_gate_config(sys.argv[1])
except ConfigError as exc:
    problems = getattr(exc, "errors", None) or [exc]
    print("\n".join(str(p) for p in problems), file=sys.stderr)
    sys.exit(2)
endpoint = config.metrics.prometheus
host, port = (endpoint.host, endpoint.port) if endpoint else ("-", "-")
print(f"{config.gate.name}\t{config.targets.writer}\t{host}\t{port}")
PY
}

check_config() {
  local description gate writer host port
  if ! "${python}" -c 'import streaming_dq' 2>/dev/null; then
    warn "streaming_dq is not importable with ${python}: CONFIG not checked (set PYTHON, or --no-check)"
    return 0
  fi
  description="$(describe_config "${config}")" || die "${config} is not a valid gate config (see above)"
  IFS=$'\t' read -r gate writer host port <<<"${description}"
  gate_name="${gate}"
  case "${writer}" in
    spark | auto) ;;
    *) warn "${config} sets targets.writer: ${writer}; this wrapper loads Spark's Delta writer (writer: spark)" ;;
  esac
  if [[ "${port}" == "-" ]]; then
    warn "${config} has no metrics.prometheus section: the driver will not serve /metrics"
  elif [[ "${port}" != "${metrics_port}" ]]; then
    warn "${config} serves /metrics on port ${port}, not ${metrics_port} (use \${${METRICS_PORT_VARIABLE}:-9108} there)"
  fi
  if [[ "${host}" == "127.0.0.1" || "${host}" == "localhost" ]] && [[ "${deploy_mode}" == "cluster" ]]; then
    warn "${config} serves /metrics on ${host}: Prometheus on another host cannot scrape it (use 0.0.0.0)"
  fi
}

master="${SPARK_MASTER:-}"
deploy_mode="client"
app_name=""
metrics_port="9108"
delta_package="${DELTA_PACKAGE_DEFAULT}"
driver_script="${script_dir}/driver.py"
python="${PYTHON:-python3}"
check=true
fetched_jars=false
dry_run=false
config=""
gate_name=""
run_args=()
passthrough=()

need_value() {
  [[ $# -ge 2 && -n "$2" ]] || die "$1 needs a value"
}

while [[ $# -gt 0 ]]; do
  case "$1" in
    -h | --help)
      usage
      exit 0
      ;;
    --master) need_value "$@"; master="$2"; shift 2 ;;
    --deploy-mode) need_value "$@"; deploy_mode="$2"; shift 2 ;;
    --name) need_value "$@"; app_name="$2"; shift 2 ;;
    --metrics-port) need_value "$@"; metrics_port="$2"; shift 2 ;;
    --delta-package) need_value "$@"; delta_package="$2"; shift 2 ;;
    --fetched-jars) fetched_jars=true; shift ;;
    --driver-script) need_value "$@"; driver_script="$2"; shift 2 ;;
    --timeout) need_value "$@"; run_args+=(--timeout "$2"); shift 2 ;;
    --fail-on) need_value "$@"; run_args+=(--fail-on "$2"); shift 2 ;;
    --available-now) run_args+=(--available-now); shift ;;
    --no-check) check=false; shift ;;
    --dry-run) dry_run=true; shift ;;
    --)
      shift
      passthrough=("$@")
      break
      ;;
    -*) die "unknown option: $1" ;;
    *)
      [[ -z "${config}" ]] || die "only one CONFIG can be given (got ${config} and $1)"
      config="$1"
      shift
      ;;
  esac
done

[[ -n "${config}" ]] || die "missing CONFIG"
[[ "${deploy_mode}" == "client" || "${deploy_mode}" == "cluster" ]] || die "--deploy-mode must be client or cluster"
if ! [[ "${metrics_port}" =~ ^[0-9]+$ ]] || ((10#${metrics_port} < 1 || 10#${metrics_port} > 65535)); then
  die "--metrics-port must be a port number (1-65535)"
fi

export "${METRICS_PORT_VARIABLE}=${metrics_port}"
if [[ "${check}" == true && -f "${config}" ]]; then
  check_config
fi
if [[ -z "${app_name}" ]]; then
  if [[ -z "${gate_name}" ]]; then
    gate_name="$(basename "${config}")"
    gate_name="${gate_name%.*}"
  fi
  app_name="streaming-dq-${gate_name}"
fi

command=("${SPARK_SUBMIT:-spark-submit}")
if [[ -n "${master}" ]]; then
  command+=(--master "${master}")
fi
command+=(--deploy-mode "${deploy_mode}" --name "${app_name}")
if [[ "${fetched_jars}" == true ]]; then
  jars="$("${python}" -m streaming_dq.runtime.jvm jars delta)" || die "no fetched delta-spark JARs (make jars)"
  command+=(--jars "${jars}")
elif [[ "${delta_package}" != "none" ]]; then
  command+=(--packages "${delta_package}")
fi
command+=(
  --conf "spark.sql.extensions=${DELTA_EXTENSION}"
  --conf "spark.sql.catalog.spark_catalog=${DELTA_CATALOG}"
  --conf "spark.sql.session.timeZone=UTC"
  --conf "spark.sql.execution.arrow.pyspark.enabled=true"
  --conf "spark.ui.showConsoleProgress=false"
  --conf "spark.metrics.namespace=${app_name}"
)
if [[ "${deploy_mode}" == "cluster" ]]; then
  # The driver does not inherit this shell's environment in cluster mode.
  command+=(
    --conf "spark.kubernetes.driverEnv.${METRICS_PORT_VARIABLE}=${metrics_port}"
    --conf "spark.yarn.appMasterEnv.${METRICS_PORT_VARIABLE}=${metrics_port}"
  )
else
  export PYSPARK_DRIVER_PYTHON="${PYSPARK_DRIVER_PYTHON:-${python}}"
fi
command+=("${passthrough[@]}" "${driver_script}" "${config}" "${run_args[@]}")

if [[ "${dry_run}" == true ]]; then
  printf '%q ' "${command[@]}"
  printf '\n'
  exit 0
fi
exec "${command[@]}"
