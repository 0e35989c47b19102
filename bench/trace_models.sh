#!/usr/bin/env bash
# bench/trace_models.sh [BUILD] — where each bench_models model's step time goes, read from glassbox's own traces:
# traces 20 training steps and 5 inference passes of each model (bench_models --trace runs/perf), prints each trace's
# op table (glassbox report) and renders the viewer's timeline of each model's slowest step (after the first) into
# docs/images/perf_<model>.png (headless, under xvfb-run). docs/PERFORMANCE.md quotes it. Needs `make build` first.
set -euo pipefail
build=${1:-build}
out=runs/perf
img=docs/images
for exe in bench/bench_models tools/glassbox viewer/glassbox-viewer; do
  [ -x "$build/$exe" ] || { echo "trace_models.sh: $build/$exe is not built: run make build first" >&2; exit 1; }
done
mkdir -p "$out" "$img"
export GLASSBOX_NUM_THREADS=${GLASSBOX_NUM_THREADS:-2}
"$build/bench/bench_models" --trace "$out"
for m in tiny_mlp mlp small_cnn resnet_stack transformer; do
  db=$out/$m.db
  # the slowest step after the first (step 0 also holds the session's start)
  slowest=$(python3 -c "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(
    'SELECT step FROM steps WHERE step > 0 ORDER BY end_ns - start_ns DESC LIMIT 1').fetchone()[0])" "$db")
  echo
  echo "== $m: slowest traced step after the first: $slowest"
  "$build/tools/glassbox" report "$db" --limit 12 | sed -n '/^steps:/,/^ *[0-9]/p;/^ops:/,/^Self CPU time/p'
  xvfb-run -a "$build/viewer/glassbox-viewer" "$db" --screenshot "$img/perf_$m.png" --panel timeline --step "$slowest" \
    --size 1600x520 >/dev/null
  echo "timeline of step $slowest: $img/perf_$m.png"
done
