# streaming_dq — the two commands: `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
PY      = $(VENV)/bin/python
STAMP   = $(VENV)/.installed
# JVM artifacts (delta-spark ...) fetched from Maven Central by `make jars`; the library finds them here.
export STREAMING_DQ_JARS ?= $(CURDIR)/.jars
BUNDLES = delta kafka avro kafka-broker s3
JARS    = $(foreach b,$(BUNDLES),$(STREAMING_DQ_JARS)/$(b)/manifest.json)

.PHONY: browser registry demo demo-kafka test test-fast test-spark test-tiers install jars lint typecheck imports promtool prometheus-bin bench bench-quick clean

PIP_EDITABLE = $(PY) -m pip install --quiet -e
# The main venv's Spark: the newest with a Delta release for it (delta-spark_4.2_2.13). The package itself
# requires no pyspark (the runtime brings it); its `spark` extra declares the supported range.
SPARK ?= 4.2.0
SPARK_PIN = 'pyspark[connect]==$(SPARK)'

# The compatibility tiers (#56): each other supported Spark line in a venv of its own, with its JARs and Java
# (tests/spark_tier.sh; `make test-spark V=3.5` runs one). What a Spark 3.5 runtime brings beside pyspark:
# pyspark 3.5's connect extra pins NumPy below 2, and pyarrow 22 and later need NumPy 2.
TIERS = 3.5 4.0 4.1 4.3
TIER_3.5 = 3.5.9 17 'pyarrow<22'
TIER_4.0 = 4.0.5 17
TIER_4.1 = 4.1.4 21
TIER_4.3 = 4.3.0 21

# The demo needs the package alone; the tests also their tools, delta-spark and the Kafka producer (#42).
DEMO_STAMP = $(VENV)/.installed-demo
$(DEMO_STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PIP_EDITABLE) '.[spark]' $(SPARK_PIN)
	@touch $(DEMO_STAMP)

$(STAMP): pyproject.toml $(DEMO_STAMP)
	$(PIP_EDITABLE) '.[spark,test,kafka,lineage,protobuf]' $(SPARK_PIN)
	@touch $(STAMP)

install: $(STAMP)

# delta-spark, Spark's Kafka reader, spark-avro, a Kafka broker (for the Kafka tests and demo) and S3A, with
# what they need beyond Spark's own JARs, with Maven (offline once ~/.m2 holds them); then our S3 LogStore is
# compiled from its source with javac (streaming_dq/runtime/logstore/; rebuilt on first use when it changes).
$(JARS) &: $(STAMP)
	$(PY) -m streaming_dq.runtime.jvm fetch $(BUNDLES)

jars: $(JARS)

# Azurite, Microsoft's Azure Storage emulator (npm), for the tests of tables on Azure Blob Storage.
AZURITE = .tools/node_modules/.bin/azurite-blob
$(AZURITE):
	npm install --prefix .tools --no-audit --no-fund --loglevel=error azurite@3.37.0

# Debian's prometheus package ships both the server and promtool, prometheus-alertmanager the Alertmanager
# (/usr/bin/prometheus-alertmanager) and amtool; the end-to-end tests need all of them. The packages may start
# their services: stopped, the tests start their own on 127.0.0.1.
prometheus-bin:
	@command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1 && \
	  command -v prometheus-alertmanager >/dev/null 2>&1 && command -v amtool >/dev/null 2>&1 || \
	  { (apt-get update -qq || true) && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq prometheus \
	    prometheus-alertmanager >/dev/null; }
	@-systemctl stop prometheus prometheus-alertmanager >/dev/null 2>&1 || true

# Apicurio Registry (a schema registry with Confluent's API) for the schema-registry Kafka tests: the app's
# tar.gz assembly from Maven Central, its SHA-1 checked, unpacked under .jars/ (runs on a Java 21+ beside Spark's).
REGISTRY = $(STREAMING_DQ_JARS)/apicurio-registry/3.3.3/quarkus-run.jar
$(REGISTRY): $(STAMP)
	$(PY) -m streaming_dq.devtools.local_registry fetch 3.3.3

registry: $(REGISTRY)

# Debian's chromium: the report's browser test opens it headless over the DevTools Protocol.
browser:
	@command -v chromium >/dev/null 2>&1 || { (apt-get update -qq || true) && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

demo: $(DEMO_STAMP)
	$(VENV)/bin/streaming-dq demo

# The Kafka job end to end: a local Kafka broker (KRaft, JARs from Maven Central), faulty messages, the gate.
demo-kafka: $(STAMP) $(JARS)
	$(PY) jobs/payments_kafka/demo.py

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: $(STAMP)
	$(VENV)/bin/mypy

# The layers contract (pyproject.toml, [tool.importlinter]): imports only point down.
imports: $(STAMP)
	$(VENV)/bin/lint-imports

promtool: prometheus-bin
	@if [ -f deploy/prometheus/alerts_test.yml ]; then \
	  promtool check config deploy/prometheus/prometheus.yml && \
	  promtool check rules deploy/prometheus/alerts.yml && \
	  amtool check-config deploy/prometheus/alertmanager.yml && \
	  cd deploy/prometheus && promtool test rules alerts_test.yml; fi

# pytest exits 5 when it collects no test: that is a failure here, not a pass. CI=1: a test whose server binary
# is missing (Prometheus, Alertmanager: installed above) fails instead of skipping. Two workers, each test file on
# one (its session's servers started once there): the integration tests wait on subprocess JVMs much of the
# time, so two share the 2 cores better than one (measured: ~42 min serial, ~30 min with two).
test: $(STAMP) $(JARS) $(AZURITE) $(REGISTRY) prometheus-bin browser lint typecheck imports promtool
	CI=1 $(PY) -m pytest -q -p no:cacheprovider -n 2 --dist loadfile --durations=25 tests; rc=$$?; \
	  if [ $$rc -eq 5 ]; then echo "pytest collected no tests"; rc=1; fi; \
	  $(MAKE) --no-print-directory test-tiers || rc=1; exit $$rc

# One compatibility tier alone: make test-spark V=3.5 (3.5, 4.0, 4.1 or 4.3; the main suite runs $(SPARK)).
test-spark: $(STAMP) prometheus-bin
	@test -n "$(TIER_$(V))" || { echo "V must be one of: $(TIERS)"; exit 2; }
	tests/spark_tier.sh $(V) $(TIER_$(V))

# Every compatibility tier, one after the other (make test runs them after the main suite).
test-tiers: $(STAMP) prometheus-bin
	@for v in $(TIERS); do $(MAKE) --no-print-directory test-spark V=$$v || exit 1; done

# The fast tier for the development loop: lint, types, layers and the JVM-free tests (under a minute).
test-fast: $(STAMP) lint typecheck imports
	$(PY) -m pytest -q -p no:cacheprovider tests/unit; rc=$$?; \
	  if [ $$rc -eq 5 ]; then echo "pytest collected no tests"; exit 1; fi; exit $$rc

# Both routers: the driver router's grid (benchmarks.run) and the Spark router's (benchmarks.distributed).
bench: $(STAMP) $(JARS)
	$(PY) -m benchmarks.run
	$(PY) -m benchmarks.distributed
	$(PY) -m benchmarks.small_batches
	$(PY) -m benchmarks.fleet
	$(PY) -m benchmarks.release
	$(PY) -m benchmarks.object_store

bench-quick: $(STAMP) $(JARS)
	$(PY) -m benchmarks.run --quick
	$(PY) -m benchmarks.distributed --quick
	$(PY) -m benchmarks.catalog --quick
	$(PY) -m benchmarks.profile_cost --quick
	$(PY) -m benchmarks.small_batches --quick
	$(PY) -m benchmarks.fleet --quick
	$(PY) -m benchmarks.release --quick
	$(PY) -m benchmarks.object_store --quick

clean:
	rm -rf $(VENV) .venvs .demo .jars .pytest_cache .mypy_cache .ruff_cache
