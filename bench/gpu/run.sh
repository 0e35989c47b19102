#!/usr/bin/env bash
# bench/gpu/run.sh — the GPU check in one go, on a machine with an NVIDIA GPU (made for Hopper, CUDA 13, no
# network): builds Release for the GPU's architecture, runs the gpu test tier (label gpu; a missing device fails
# here, GLASSBOX_EXPECT_GPU=1; NCCL's smoke test among them: 1 GPU, and 2 ranks when there are 2 GPUs) and the GPU
# benchmarks, and prints a short table last.
#
#   bench/gpu/run.sh [BUILD_DIR]      (default build-gpu; $OUT, when set, receives the logs)
#
# Needs what `make build` needs (CMake, a C++20 compiler, nvcc, SQLite and OpenBLAS headers, doctest); it installs
# nothing. A machine without the Debian development packages (the GPU machines' image: CUDA, CMake, ninja and PyTorch,
# no network) gets them carried: run bench/gpu/fetch-deps.sh on a Debian machine first and carry .gpu-deps; they are
# unpacked into the build folder and put first on CMake's and the loader's paths. cuDNN, NCCL and libtorch missing
# from the toolkit are taken from PyTorch's pip installation when python3 has it (bench_gpu_models' peer is that
# PyTorch). Set CUDA_ARCH to build for another GPU than the one present (e.g. CUDA_ARCH="80;90").
#
# A device run, from the repository root:   bench/gpu/fetch-deps.sh   (here), then run with carry [".gpu-deps"]:
#   bench/gpu/run.sh /tmp/build-gpu
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
BUILD=${1:-build-gpu}
LOG=${OUT:-$BUILD}
mkdir -p "$BUILD" "$LOG"
start=$(date +%s)

arch=${CUDA_ARCH:-}
if [ -z "$arch" ] && command -v nvidia-smi >/dev/null; then
  arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '.')
fi
arch=${arch:-90}

# carried Debian packages (bench/gpu/fetch-deps.sh): unpacked here, never into /
prefixes=()
extra=()
if compgen -G ".gpu-deps/*.deb" > /dev/null; then
  deps="$(cd "$BUILD" && pwd)/deps"
  for d in .gpu-deps/*.deb; do dpkg-deb -x "$d" "$deps"; done
  lib="$deps/usr/lib/x86_64-linux-gnu"
  export LD_LIBRARY_PATH="$lib/openblas-pthread:$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  prefixes+=("$deps/usr")
  extra+=("-DCMAKE_LIBRARY_PATH=$lib/openblas-pthread;$lib"
          "-DCMAKE_INCLUDE_PATH=$deps/usr/include/x86_64-linux-gnu/openblas-pthread;$deps/usr/include")
  echo "== carried packages: $(ls .gpu-deps/*.deb | wc -l) unpacked into $deps"
fi
# PyTorch's pip installation: libtorch for bench_gpu_models' peer, and cuDNN / NCCL where the toolkit has none
if command -v python3 > /dev/null; then
  torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2> /dev/null || true)
  if [ -n "$torch_prefix" ]; then
    # its CMake config tried alone first: one that fails must not stop glassbox's own configure
    probe=$(mktemp -d)
    printf 'cmake_minimum_required(VERSION 3.18)\nproject(probe CXX)\nfind_package(Torch REQUIRED)\n' > "$probe/CMakeLists.txt"
    if cmake -S "$probe" -B "$probe/b" "-DCMAKE_PREFIX_PATH=$torch_prefix" > "$LOG/torch_probe.log" 2>&1; then
      prefixes+=("$torch_prefix")
    else
      echo "== PyTorch's libtorch does not configure here ($LOG/torch_probe.log): no bench_gpu_models"
    fi
    rm -rf "$probe"
  fi
  nv=$(python3 -c 'import nvidia; print(list(nvidia.__path__)[0])' 2> /dev/null || true)
  cuda_include=$(dirname "$(dirname "$(command -v nvcc)")")/include
  if [ -n "$nv" ] && [ ! -e "$cuda_include/cudnn.h" ] && [ -e "$nv/cudnn/include/cudnn.h" ]; then
    extra+=("-DGLASSBOX_CUDNN_INCLUDE=$nv/cudnn/include" "-DGLASSBOX_CUDNN_LIBRARY=$(ls "$nv"/cudnn/lib/libcudnn.so* | head -1)")
    export LD_LIBRARY_PATH="$nv/cudnn/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
  if [ -n "$nv" ] && [ ! -e "$cuda_include/nccl.h" ] && [ -e "$nv/nccl/include/nccl.h" ]; then
    extra+=("-DGLASSBOX_NCCL_INCLUDE=$nv/nccl/include" "-DGLASSBOX_NCCL_LIBRARY=$(ls "$nv"/nccl/lib/libnccl.so* | head -1)")
    export LD_LIBRARY_PATH="$nv/nccl/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
fi
if [ ${#prefixes[@]} -gt 0 ]; then extra+=("-DCMAKE_PREFIX_PATH=$(IFS=';'; echo "${prefixes[*]}")"); fi

echo "== configure (Release, sm_$arch)"
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CUDA_ARCHITECTURES=$arch" \
  -DGLASSBOX_BUILD_SAMPLES=OFF "${extra[@]}" > "$LOG/configure.log" 2>&1 || { tail -30 "$LOG/configure.log"; exit 2; }
grep -E "^-- glassbox|cuDNN|NCCL|libtorch" "$LOG/configure.log" | head -10
# the GPU tier is one executable (test_gpu: every tests/**/*_gpu_test.cpp); CTest runs each file as its own test
benches="bench_gpu_matmul"
# bench_gpu_conv exists where the configure found cuDNN, bench_gpu_models where it found libtorch
targets=$(cmake --build "$BUILD" --target help 2> /dev/null)
grep -q bench_gpu_conv <<< "$targets" && benches="$benches bench_gpu_conv"
grep -q bench_gpu_models <<< "$targets" && benches="$benches bench_gpu_models"
echo "== build: glassbox, $(cd tests && ls engine/*/*_gpu_test.cpp | wc -l) gpu test files (test_gpu), $benches"
# shellcheck disable=SC2086
cmake --build "$BUILD" -j "$(nproc)" --target test_gpu $benches > "$LOG/build.log" 2>&1 ||
  { grep -E "error|Error" "$LOG/build.log" | head -40; exit 2; }
built=$(date +%s)

echo "== gpu tests"
GLASSBOX_EXPECT_GPU=1 ctest --test-dir "$BUILD" -L gpu --output-on-failure -j 1 2>&1 | tee "$LOG/tests.log"
tests_rc=${PIPESTATUS[0]}
echo "== benchmarks"
for b in $benches; do "$BUILD/bench/gpu/$b" 2>&1; done | tee "$LOG/bench.jsonl"
done_at=$(date +%s)

echo
echo "== summary ($(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1))"
printf "%-28s %s\n" "build" "$((built - start)) s"
printf "%-28s %s\n" "gpu tests" "$(grep -E 'tests passed|tests failed' "$LOG/tests.log" | tail -1)"
# the NCCL smoke test: a group of one on this GPU, and 2 ranks (MPI and TCP id exchange) where there are 2 GPUs
grep -E "Test +#[0-9]+: engine\.distributed\.nccl_backend_gpu" "$LOG/tests.log" |
  sed -E 's/^.*Test +#[0-9]+: engine\.distributed\.(nccl_backend_gpu[.a-z0-9_]*)[ .]+/\1 /' |
  while read -r name status rest; do printf "%-28s %s\n" "$name" "$status $rest"; done
python3 - "$LOG/bench.jsonl" <<'PY' 2>/dev/null || cat "$LOG/bench.jsonl"
import json, sys
for line in open(sys.argv[1]):
    try:
        r = json.loads(line)
    except ValueError:
        continue
    if "metric" not in r:
        print(f"{r.get('bench', '?'):28s} {r}")
        continue
    extra = ", ".join(f"{k} {v:.3g}" for k, v in r.items()
                      if k in ("tflops", "of_cublas", "of_cudnn", "GB_per_s", "ratio", "traced_over_untraced"))
    print(f"{r['bench'] + ' ' + r['metric']:28s} {r['value']:.4g} {r['unit']} vs {r['peer']} {r['peer_value']:.4g}"
          f" ({extra})")
PY
printf "%-28s %s\n" "total" "$((done_at - start)) s"
exit "$tests_rc"
