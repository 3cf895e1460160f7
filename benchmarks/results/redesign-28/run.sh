#!/bin/bash
# before / after the redesign, interleaved: driver router grid, then the Spark router grid, twice.
PY=/work/main/.venv/bin/python
for round in 1 2; do
  for side in before after; do
    echo "$(date +%T) round $round $side run" >> /tmp/bench/log
    (cd /tmp/$side && /usr/bin/time -f "%U user %S sys %e wall" $PY -m benchmarks.run --quick --no-plot --out /tmp/bench/$side-run-$round.md --json /tmp/bench/$side-run-$round.json) >> /tmp/bench/$side-run-$round.log 2>&1
  done
  for side in before after; do
    echo "$(date +%T) round $round $side distributed" >> /tmp/bench/log
    (cd /tmp/$side && /usr/bin/time -f "%U user %S sys %e wall" $PY -m benchmarks.distributed --quick --out /tmp/bench/$side-dist-$round.md) >> /tmp/bench/$side-dist-$round.log 2>&1
  done
done
echo "$(date +%T) done" >> /tmp/bench/log
