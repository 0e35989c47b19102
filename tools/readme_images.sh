#!/usr/bin/env bash
# tools/readme_images.sh [BUILD] — remakes every picture in README.md, docs/GUIDE.md and docs/LESSONS.md from real
# runs: each sample (and one lesson) runs traced into runs/images/, then the viewer renders the panel a section shows,
# headless under xvfb-run, into docs/images/. Needs a built BUILD folder (make test builds everything it uses).
# Pictures are of real runs, so they change a little with each run (timings); the numbers in the text are from the
# runs the text quotes.
set -euo pipefail
build=${1:-build}
out=runs/images
img=docs/images
mkdir -p "$out" "$img"
export GLASSBOX_NUM_THREADS=${GLASSBOX_NUM_THREADS:-2}
for exe in samples/train_mlp samples/train_images samples/train_transformer samples/oom samples/nan samples/dataloader_bound \
           samples/long_run samples/plan_memory samples/lessons/lesson_missing_zero_grad tools/glassbox viewer/glassbox-viewer; do
  [ -x "$build/$exe" ] || { echo "readme_images.sh: $build/$exe is not built: run make test (or build it) first" >&2; exit 1; }
done
fresh() { rm -rf "$1" "$1-wal" "$1-shm"; }
shot() {  # shot TRACE PNG PANEL [viewer options...]
  local trace=$1 png=$2 panel=$3
  shift 3
  xvfb-run -a "$build/viewer/glassbox-viewer" "$trace" --screenshot "$img/$png" --panel "$panel" "$@" >/dev/null
  echo "  $img/$png  ($panel panel of $trace)"
}

echo "running the samples traced into $out/ ..."
fresh $out/train_mlp.db && "$build/samples/train_mlp" --trace $out/train_mlp.db >/dev/null
fresh $out/train_images.db && "$build/samples/train_images" --model resnet --train 768 --epochs 2 --batch 32 --trace $out/train_images.db >/dev/null
fresh $out/train_transformer.db && "$build/samples/train_transformer" --steps 100 --trace $out/train_transformer.db >/dev/null
fresh $out/oom.db && "$build/samples/oom" --trace $out/oom.db >/dev/null
fresh $out/nan.db && "$build/samples/nan" --trace $out/nan.db >/dev/null
fresh $out/long_run.db && GLASSBOX_TRACE=$out/long_run.db "$build/samples/long_run" >/dev/null
fresh $out/dataloader_bound.w0.db && "$build/samples/dataloader_bound" --workers 0 --trace $out/dataloader_bound.w0.db >/dev/null
fresh $out/plan.db && GLASSBOX_TRACE=$out/plan.db "$build/samples/plan_memory" --batch 32 >/dev/null || true  # batch 32 does not fit: exit 1
fresh $out/mzg && "$build/samples/lessons/lesson_missing_zero_grad" $out/mzg >/dev/null
if [ -x "$build/samples/train_ddp" ] && command -v mpirun >/dev/null; then  # a build with MPI: the 2-rank job, merged
  fresh $out/ddp.rank0.db && fresh $out/ddp.rank1.db && fresh $out/ddp.db
  GLASSBOX_NUM_THREADS=1 GLASSBOX_TRACE=$out/ddp.db mpirun --allow-run-as-root --oversubscribe -np 2 \
    "$build/samples/train_ddp" --straggler 1 >/dev/null
  "$build/tools/glassbox" merge $out/ddp.rank0.db $out/ddp.rank1.db -o $out/ddp.db >/dev/null
fi

echo "rendering the viewer's panels into $img/ ..."
shot $out/train_mlp.db sample_train_mlp_timeline.png timeline --step 150 --size 1600x900
shot $out/train_mlp.db viewer_graph.png graph --step 150 --size 1600x1000
shot $out/train_images.db sample_train_images_ops.png ops --size 1600x900
shot $out/train_transformer.db viewer_timeline.png timeline --step 60 --size 1600x1000
shot $out/oom.db sample_oom_memory.png memory --select oom --size 1600x1000
shot $out/nan.db sample_nan_anomalies.png anomalies --size 1600x900
shot $out/long_run.db sample_long_run.png run --size 1600x1000
shot $out/dataloader_bound.w0.db sample_dataloader_bound.png dataloader --size 1600x900
shot $out/plan.db guide_memory.png memory --size 1400x850
shot $out/mzg/no_zero_grad.db lesson_missing_zero_grad.png anomalies --size 1600x800
[ -f $out/ddp.db ] && shot $out/ddp.db guide_ddp_timeline.png timeline --step 100 --size 1600x900
