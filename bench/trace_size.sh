#!/usr/bin/env bash
# bench/trace_size.sh [BUILD] — how fast a long run's trace grows, with the default detail (the first 500 steps in
# full, then 5 steps every 1000, the flight recorder) against full detail (GLASSBOX_DETAIL=full), for train_mlp and
# train_transformer (2 layers, d 64): each sample is traced for a short and a long run, and the growth after the
# first steps is (bytes(long) - bytes(short)) / (steps(long) - steps(short)). Prints JSON lines like the other
# benchmarks (the peer is full detail); docs/PERFORMANCE.md quotes them. Needs `make build` first.
# Targets (issue [Long runs]): <= 1 KB per step for train_mlp, <= 5 KB per step for train_transformer.
set -euo pipefail
build=${1:-build}
for exe in samples/train_mlp samples/train_transformer tools/glassbox; do
  [ -x "$build/$exe" ] || { echo "trace_size.sh: $build/$exe is not built: run make build first" >&2; exit 1; }
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export GLASSBOX_NUM_THREADS=${GLASSBOX_NUM_THREADS:-2}

# size SAMPLE STEPS DETAIL -> bytes of the finished trace
size() {
  local sample=$1 steps=$2 detail=$3 db="$out/$1.$2.$3.db"
  GLASSBOX_DETAIL=$detail "$build/samples/$sample" --steps "$steps" --trace "$db" >/dev/null
  "$build/tools/glassbox" check "$db" >/dev/null || { echo "trace_size.sh: glassbox check failed on $db" >&2; exit 1; }
  stat -c %s "$db"
}

# growth SAMPLE SHORT LONG TARGET_BYTES_PER_STEP
growth() {
  local sample=$1 short=$2 long=$3 target=$4
  local d0 d1 f0 f1
  d0=$(size "$sample" "$short" first=500,every=1000,window=5)
  d1=$(size "$sample" "$long" first=500,every=1000,window=5)
  f0=$(size "$sample" "$short" full)
  f1=$(size "$sample" "$long" full)
  python3 - "$sample" "$short" "$long" "$d0" "$d1" "$f0" "$f1" "$target" <<'EOF'
import json, sys
sample, short, long_, d0, d1, f0, f1, target = sys.argv[1], *map(int, sys.argv[2:])
steps = long_ - short
per_step, full_per_step = (d1 - d0) / steps, (f1 - f0) / steps
print(json.dumps({"bench": "trace_size", "metric": f"{sample}.bytes_per_step_after_first_steps", "value": round(per_step),
                  "unit": "B", "peer": "full detail", "peer_value": round(full_per_step),
                  "ratio": round(per_step / full_per_step, 4), "target": target,
                  "trace_bytes": d1, "full_trace_bytes": f1, "steps": long_}))
EOF
}

growth train_mlp 1000 6000 1024
growth train_transformer 600 2600 5120
