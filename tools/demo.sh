#!/usr/bin/env bash
# tools/demo.sh [BUILD] — what `make demo` runs once it has built train_mlp, glassbox and the viewer in BUILD:
# train_mlp traced into runs/train_mlp.db, `glassbox report` of that trace, then the viewer — in a window when there
# is a display, or, without one (a server, CI, ssh), screenshots of its timeline, memory, gradients and anomalies
# panels written to runs/ by the viewer's headless --screenshot under xvfb-run.
set -euo pipefail
build=${1:-build}
runs=runs
trace=$runs/train_mlp.db
mkdir -p "$runs"
rm -f "$trace" "$trace-wal" "$trace-shm"  # a demo run starts a fresh trace

GLASSBOX_NUM_THREADS=${GLASSBOX_NUM_THREADS:-2} "$build/samples/train_mlp" --trace "$trace"
echo
echo "== glassbox report $trace =="
"$build/tools/glassbox" report "$trace" --limit 10
echo
echo "More from the same trace: $build/tools/glassbox report $trace --kind backward_node (the autograd nodes),"
echo "  sqlite3 $trace (the tables: traces/SCHEMA.md), $build/tools/glassbox export $trace --chrome train_mlp.json (Perfetto)"

viewer=$build/viewer/glassbox-viewer
if [ ! -x "$viewer" ]; then
  echo "The viewer was not built (its libraries were not found when $build was configured): see $build.configure.log."
  exit 0
fi
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && [ -z "${CI:-}" ] && [ -z "${GLASSBOX_DEMO_HEADLESS:-}" ]; then
  echo
  echo "Opening the viewer on $trace (close its window to finish)."
  exec "$viewer" "$trace"
fi
if ! command -v xvfb-run >/dev/null 2>&1; then
  echo "No display and no xvfb-run: install xvfb (apt-get install xvfb), or open the trace on a machine with a"
  echo "display: glassbox-viewer $trace"
  exit 0
fi
echo
shots=()
for panel in timeline memory gradients anomalies; do
  png=$runs/train_mlp_$panel.png
  step=(); [ "$panel" = timeline ] && step=(--step 150)  # one training step, its ops and autograd nodes readable
  xvfb-run -a "$viewer" "$trace" --screenshot "$png" --panel "$panel" --size 1600x1000 "${step[@]}" >/dev/null
  shots+=("$png")
done
echo "No display, so the viewer drew its panels offscreen: ${shots[*]}"
echo "Open them with any image viewer, or the trace itself on a machine with a display: glassbox-viewer $trace"
