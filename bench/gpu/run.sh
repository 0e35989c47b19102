#!/usr/bin/env bash
# bench/gpu/run.sh — the GPU check, on a machine with an NVIDIA GPU (made for Hopper, CUDA 13, no network): builds
# Release for the GPU's architecture, runs the gpu test tier (label gpu; a missing device fails here,
# GLASSBOX_EXPECT_GPU=1; NCCL's smoke test among them: 1 GPU, and 2 ranks under mpirun when there are 2 GPUs) and the
# GPU benchmarks, and prints a short table last. In steps, each of which fits in one device command (10 minutes):
#
#   bench/gpu/run.sh build   [BUILD_DIR]   configure + build test_gpu and the benches (a fresh 16-core machine: about
#                                           4 minutes, see docs/PERFORMANCE.md; an unchanged build: seconds)
#   bench/gpu/run.sh tests   [BUILD_DIR]   the gpu tier under CTest (needs `build` done in BUILD_DIR)
#   bench/gpu/run.sh bench   [BUILD_DIR]   the GPU benchmarks, their JSON lines in bench.jsonl
#   bench/gpu/run.sh summary [BUILD_DIR]   the table, from what the steps above left in BUILD_DIR/results
#   bench/gpu/run.sh [all]   [BUILD_DIR]   the four in one go (a fresh machine: may not fit one command)
#
# BUILD_DIR defaults to build-gpu. Each step writes its logs to BUILD_DIR/results and copies them to $OUT when set;
# each can be run again (the build is incremental, the tests and benches rerun), and a step after a machine went back
# says to run `build` first. JOBS (default: the cores) caps the build's parallelism; ccache is used when installed
# (CCACHE_DIR as usual: it serves the CUDA sources and those without the engine's precompiled header, whose GCC .gch
# differs from build to build). CUDA_ARCH builds for another GPU than the one present (e.g. CUDA_ARCH="80;90"; default: the
# present GPU's, else 90). GPU_TESTS_REGEX runs only the gpu tests it matches (ctest -R); TEST_TIMEOUT (300 s) and
# BENCH_TIMEOUT (300 s) bound one test and one benchmark.
#
# What it needs and where it looks:
# - nvcc: $CUDACXX, PATH, $CUDA_HOME/bin, $CUDA_PATH/bin, /usr/local/cuda/bin, /usr/local/cuda-*/bin (newest first),
#   then pip's nvidia/cu13/bin or nvidia/cuda_nvcc/bin; it says which, and fails when none works or the configure
#   turned CUDA off (there would be no test_gpu to run).
# - CMake (3.25 or newer), ninja and a C++20 compiler: from the machine.
# - SQLite, zlib, OpenBLAS, doctest, nlohmann-json, CLI11 and Open MPI: the machine's, or carried. The GPU machines'
#   image has CUDA, CMake, ninja and PyTorch but no Debian development packages and no network: run
#   bench/gpu/fetch-deps.sh on a Debian 12 machine first and carry .gpu-deps. The .debs are unpacked into
#   BUILD_DIR/deps (never into /), their absolute symlinks made relative, and put first on CMake's and the loader's
#   paths; the carried Open MPI is found through its mpicxx wrapper with OPAL_PREFIX at the unpacked usr, and mpirun
#   runs from there as root (the 2-rank NCCL tests are registered only where MPI is found).
# - cuDNN, NCCL and libtorch: the toolkit's, else PyTorch's pip installation's (python3 with torch; bench_gpu_models'
#   peer is that PyTorch, probed alone first). cuDNN 9 loads cuBLAS(Lt) and NVRTC at run time: the toolkit's library
#   folder and pip's cu13 / cublas / cuda_nvrtc / cudnn / nccl folders are put on LD_LIBRARY_PATH.
#
# A device run, from the repository root: bench/gpu/fetch-deps.sh here, then each step as its own command with carry
# [".gpu-deps"] (docs/PERFORMANCE.md, "The GPU check"). bench/gpu/dry-run.sh runs the steps in a bare Debian prefix on a
# machine without a GPU: they must get as far as "no usable CUDA device".
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2

step=all
case "${1:-}" in
  build | tests | bench | summary | all) step=$1; shift ;;
  -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
esac
BUILD=${1:-build-gpu}
mkdir -p "$BUILD" || exit 2
BUILD=$(cd "$BUILD" && pwd)
RES=$BUILD/results
mkdir -p "$RES"
if [ -n "${OUT:-}" ]; then mkdir -p "$OUT"; fi
# keep: copy a step's result files to $OUT (the device tool brings back at most 8 files a command)
keep() { if [ -n "${OUT:-}" ]; then for f in "$@"; do [ -e "$RES/$f" ] && cp "$RES/$f" "$OUT/"; done; fi; return 0; }
# note KEY VALUE: a line of BUILD_DIR/results/steps (timings and outcomes the summary reads)
note() { { grep -v "^$1 " "$RES/steps" 2> /dev/null; echo "$1 $2"; } > "$RES/steps.new"; mv "$RES/steps.new" "$RES/steps"; }
noted() { sed -n "s/^$1 //p" "$RES/steps" 2> /dev/null | tail -1; }
prepend() { eval "export $1=\"$2\${$1:+:\$$1}\""; }  # prepend VAR DIR: DIR first on a colon-separated path

# ---- the environment every step needs: carried packages, nvcc, pip's nvidia libraries, MPI -------------------------
cmake_extra=()   # -D options for the configure
prefixes=()      # CMAKE_PREFIX_PATH entries
unpack_deb() {   # dpkg-deb where there is one, else ar + tar (a machine without dpkg)
  if command -v dpkg-deb > /dev/null; then dpkg-deb -x "$1" "$2"; return; fi
  local member
  member=$(ar t "$1" | grep '^data\.tar') || return 1
  case "$member" in
    *.xz) ar p "$1" "$member" | tar -xJ -C "$2" ;;
    *.zst) ar p "$1" "$member" | zstd -dc | tar -x -C "$2" ;;
    *.gz) ar p "$1" "$member" | tar -xz -C "$2" ;;
    *) ar p "$1" "$member" | tar -x -C "$2" ;;
  esac
}
carried_deps() {
  compgen -G ".gpu-deps/*.deb" > /dev/null || return 0
  deps=$BUILD/deps
  local stamp want
  want=$(cd .gpu-deps && wc -c ./*.deb)  # names and sizes: a carried copy's new times alone do not unpack again
  stamp=$deps/.unpacked
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    rm -rf "$deps" && mkdir -p "$deps"
    for d in .gpu-deps/*.deb; do unpack_deb "$d" "$deps" || { echo "== cannot unpack $d"; exit 2; }; done
    # absolute symlinks (zlib1g-dev's libz.so -> /lib/x86_64-linux-gnu/libz.so.1.2.13) point at the host: make each
    # one relative, to the same path inside deps
    find "$deps" -type l -lname '/*' | while read -r link; do
      target=$(readlink "$link")
      ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$deps$target")" "$link"
    done
    echo "$want" > "$stamp"
    echo "== carried packages: $(ls .gpu-deps/*.deb | wc -l) unpacked into $deps"
  fi
  local lib=$deps/usr/lib/x86_64-linux-gnu lib2=$deps/lib/x86_64-linux-gnu  # zlib1g's files are under lib/
  deps_ld="$lib/openblas-pthread:$lib:$lib2"  # LD_LIBRARY_PATH's first entries (prepare)
  prefixes+=("$deps/usr")
  cmake_extra+=("-DCMAKE_LIBRARY_PATH=$lib/openblas-pthread;$lib;$lib2"
                "-DCMAKE_INCLUDE_PATH=$deps/usr/include/x86_64-linux-gnu/openblas-pthread;$deps/usr/include")
  if [ -x "$deps/usr/bin/orterun" ]; then
    # Open MPI unpacked elsewhere than its /usr: OPAL_PREFIX relocates its wrapper data, MCA components and help
    # files; mpirun runs as root (the device machines' user); plm_rsh_agent names a program that exists (there is no
    # ssh there; local ranks never use it)
    export OPAL_PREFIX=$deps/usr OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_MCA_plm_rsh_agent=${OMPI_MCA_plm_rsh_agent:-false}
    # PMIx (libpmix2) looks for its plugins under its own /usr/lib/x86_64-linux-gnu/pmix2, not relocated by
    # OPAL_PREFIX (nor PMIX_PREFIX): without them mpirun prints help-pcompress's "unavailable" and goes on
    export PMIX_MCA_mca_base_component_path=$deps/usr/lib/x86_64-linux-gnu/pmix2/lib/pmix
    prepend PATH "$deps/usr/bin"
    cmake_extra+=("-DMPI_CXX_COMPILER=$deps/usr/bin/mpicxx.openmpi" "-DMPIEXEC_EXECUTABLE=$deps/usr/bin/mpiexec.openmpi")
    mpi_carried=1
  fi
}
nvidia_pip() {  # pip's nvidia/ folder of python3, if any
  nv=""
  command -v python3 > /dev/null || return 0
  nv=$(python3 -c 'import nvidia, sys; print(list(nvidia.__path__)[0])' 2> /dev/null || true)
}
find_nvcc() {
  local c newest
  newest=$(ls -d /usr/local/cuda-*/bin/nvcc 2> /dev/null | sort -rV | head -1)
  for c in "${CUDACXX:+CUDACXX:$CUDACXX}" "PATH:$(command -v nvcc 2> /dev/null)" "${CUDA_HOME:+CUDA_HOME:$CUDA_HOME/bin/nvcc}" \
           "${CUDA_PATH:+CUDA_PATH:$CUDA_PATH/bin/nvcc}" "/usr/local/cuda:/usr/local/cuda/bin/nvcc" \
           "${newest:+/usr/local/cuda-*:$newest}" "${nv:+pip:$nv/cu13/bin/nvcc}" "${nv:+pip:$nv/cuda_nvcc/bin/nvcc}"; do
    [ -n "$c" ] || continue
    if [ -x "${c#*:}" ] && "${c#*:}" --version > /dev/null 2>&1; then
      nvcc=$(realpath "${c#*:}"); nvcc_from=${c%%:*}; return 0
    fi
  done
  return 1
}
prepare() {
  mpi_carried=0 deps_ld="" cudnn_from=toolkit nccl_from=toolkit
  carried_deps
  nvidia_pip
  if ! find_nvcc; then
    echo "== FAILED: no working nvcc in \$CUDACXX, PATH, \$CUDA_HOME/bin, \$CUDA_PATH/bin, /usr/local/cuda/bin,"
    echo "   /usr/local/cuda-*/bin or pip's nvidia/cu13/bin: this check needs the CUDA toolkit (set CUDA_HOME)"
    exit 2
  fi
  cuda_root=$(dirname "$(dirname "$nvcc")")
  prepend PATH "$cuda_root/bin"
  export CUDACXX=$nvcc
  cuda_include=$cuda_root/include
  for d in "$cuda_root/targets/x86_64-linux/lib" "$cuda_root/lib64"; do
    if [ -d "$d" ]; then cuda_lib=$d; break; fi
  done
  # cuDNN and NCCL: the toolkit's, else pip's (cuDNN 9 dlopens libcublasLt and libnvrtc: pip's cu13 / cublas /
  # cuda_nvrtc folders go on the loader's path with its own, the toolkit's library folder after them)
  pip_libs=()
  if [ -n "$nv" ] && [ ! -e "$cuda_include/cudnn.h" ] && [ -e "$nv/cudnn/include/cudnn.h" ]; then
    cmake_extra+=("-DGLASSBOX_CUDNN_INCLUDE=$nv/cudnn/include"
                  "-DGLASSBOX_CUDNN_LIBRARY=$(ls "$nv"/cudnn/lib/libcudnn.so* | head -1)")
    pip_libs+=(cudnn cu13 cublas cuda_nvrtc)
    cudnn_from="pip ($nv/cudnn)"
  fi
  if [ -n "$nv" ] && [ ! -e "$cuda_include/nccl.h" ] && [ -e "$nv/nccl/include/nccl.h" ]; then
    cmake_extra+=("-DGLASSBOX_NCCL_INCLUDE=$nv/nccl/include"
                  "-DGLASSBOX_NCCL_LIBRARY=$(ls "$nv"/nccl/lib/libnccl.so* | head -1)")
    pip_libs+=(nccl)
    nccl_from="pip ($nv/nccl)"
  fi
  # the loader's path: carried packages, then pip's folders in use (those PyTorch loads too), then the toolkit's
  local pl="" d
  for d in nccl cudnn cu13 cublas cuda_nvrtc; do
    if [[ " ${pip_libs[*]} " == *" $d "* ]] && [ -d "$nv/$d/lib" ]; then pl="$pl:$nv/$d/lib"; fi
  done
  pl="${pl#:}${cuda_lib:+:$cuda_lib}"
  if [ -n "${deps_ld:-}" ]; then pl="$deps_ld${pl:+:$pl}"; fi
  if [ -n "$pl" ]; then prepend LD_LIBRARY_PATH "$pl"; fi
  echo "== nvcc: $nvcc (from $nvcc_from; $("$nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/CUDA \1/p'))"
}

# CMake 3.25's FindCUDAToolkit sets a property on CUDA::nvToolsExt without checking that it exists, and CUDA 12.9 and
# later have no libnvToolsExt (only the header-only nvtx3): with such a CMake (Debian 12's) the configure stops there.
# A copy of that module with the check added goes first on CMAKE_MODULE_PATH; a fixed CMake is left alone.
cmake_module_fix() {
  local croot mod fix=$BUILD/cmake-fix
  module_fix=()
  echo 'message("${CMAKE_ROOT}")' > "$RES/cmake_root.cmake"
  croot=$(cmake -P "$RES/cmake_root.cmake" 2>&1)
  mod=$croot/Modules/FindCUDAToolkit.cmake
  if [ -f "$mod" ] && grep -q '^    if(CMAKE_MINIMUM_REQUIRED_VERSION VERSION_GREATER_EQUAL 3.25)$' "$mod" &&
     grep -q 'set_property(TARGET CUDA::nvToolsExt PROPERTY DEPRECATION' "$mod"; then
    mkdir -p "$fix"
    sed -e 's/^    if(CMAKE_MINIMUM_REQUIRED_VERSION VERSION_GREATER_EQUAL 3.25)$/    if(TARGET CUDA::nvToolsExt AND CMAKE_MINIMUM_REQUIRED_VERSION VERSION_GREATER_EQUAL 3.25)/' \
        -e "s|\${CMAKE_CURRENT_LIST_DIR}|$croot/Modules|g" "$mod" > "$fix/FindCUDAToolkit.cmake"
    module_fix=("-DCMAKE_MODULE_PATH=$fix")
    cmake_extra+=("${module_fix[@]}")
    echo "== $(cmake --version | head -1): its FindCUDAToolkit fails without libnvToolsExt (CUDA 12.9+): a fixed copy in $fix"
  fi
}

# ---- build ---------------------------------------------------------------------------------------------------------
do_build() {
  local start arch targets benches torch_prefix probe
  start=$(date +%s)
  arch=${CUDA_ARCH:-}
  if [ -z "$arch" ] && command -v nvidia-smi > /dev/null; then
    arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2> /dev/null | head -1 | tr -d '.')
  fi
  arch=${arch:-90}
  cmake_module_fix
  # PyTorch's pip installation: libtorch for bench_gpu_models' peer; its CMake config tried alone first (one that
  # fails must not stop glassbox's own configure), as glassbox's configure will meet it: CMake 3.25's policies,
  # CUDA enabled, the same FindCUDAToolkit
  if command -v python3 > /dev/null; then
    torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2> /dev/null || true)
    if [ -n "$torch_prefix" ]; then
      probe=$(mktemp -d)
      printf '%s\n' 'cmake_minimum_required(VERSION 3.25)' 'project(probe CXX CUDA)' \
        'find_package(CUDAToolkit REQUIRED)' 'find_package(Torch REQUIRED)' > "$probe/CMakeLists.txt"
      if cmake -S "$probe" -B "$probe/b" "-DCMAKE_PREFIX_PATH=$torch_prefix" "-DCMAKE_CUDA_COMPILER=$nvcc" \
           "-DCMAKE_CUDA_ARCHITECTURES=$arch" "${module_fix[@]}" > "$RES/torch_probe.log" 2>&1; then
        prefixes+=("$torch_prefix")
      else
        echo "== PyTorch's libtorch does not configure here ($RES/torch_probe.log): no bench_gpu_models"
      fi
      rm -rf "$probe"
    else
      echo "== no PyTorch in python3: no bench_gpu_models (its peer)" | tee "$RES/torch_probe.log"
    fi
  fi
  if [ ${#prefixes[@]} -gt 0 ]; then cmake_extra+=("-DCMAKE_PREFIX_PATH=$(IFS=';'; echo "${prefixes[*]}")"); fi
  command -v ccache > /dev/null && echo "== ccache: $(command -v ccache) (${CCACHE_DIR:-its default cache})"

  echo "== configure (Release, sm_$arch)"
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CUDA_ARCHITECTURES=$arch" \
    "-DCMAKE_CUDA_COMPILER=$nvcc" -DGLASSBOX_BUILD_SAMPLES=OFF "${cmake_extra[@]}" > "$RES/configure.log" 2>&1 ||
    { tail -30 "$RES/configure.log"; keep configure.log torch_probe.log; note build failed; exit 2; }
  grep -E "^-- glassbox|cuDNN|NCCL|libtorch|MPI" "$RES/configure.log" | head -12
  targets=$(cmake --build "$BUILD" --target help 2> /dev/null)
  if ! grep -q "^test_gpu:" <<< "$targets"; then
    echo "== FAILED: the configure turned CUDA off (no test_gpu target) with nvcc $nvcc:"
    grep -iE "cuda|nvcc" "$RES/configure.log" | head -10
    keep configure.log torch_probe.log; note build failed; exit 2
  fi
  if [ "$mpi_carried" = 1 ] && grep -q "glassbox: MPI not found" "$RES/configure.log"; then
    echo "== FAILED: Open MPI is carried (.gpu-deps) but CMake's FindMPI did not take it:"
    grep -iE "mpi" "$RES/configure.log" | head -10
    keep configure.log torch_probe.log; note build failed; exit 2
  fi
  local listed yes=(no yes)
  listed=$(ctest --test-dir "$BUILD" -N -L gpu 2> /dev/null)
  echo "== configured: CUDA (test_gpu, $(grep -c 'Test *#' <<< "$listed") gpu tests);" \
       "cuDNN: $(grep -q '^bench_gpu_conv:' <<< "$targets" && echo "$cudnn_from" || echo no);" \
       "NCCL: $(grep -q 'nccl_backend_gpu' <<< "$listed" && echo "$nccl_from" || echo no);" \
       "MPI: $(grep -q 'glassbox: MPI not found' "$RES/configure.log" && echo no || echo yes);" \
       "2-rank NCCL tests: $(grep -q 'nccl_backend_gpu.2ranks' <<< "$listed" && echo registered || echo no);" \
       "libtorch: ${yes[$(grep -q '^bench_gpu_models:' <<< "$targets" && echo 1 || echo 0)]}"
  # the GPU tier is one executable (test_gpu: every tests/**/*_gpu_test.cpp); CTest runs each file as its own test
  benches="bench_gpu_matmul"
  # bench_gpu_conv exists where the configure found cuDNN, bench_gpu_models where it found libtorch
  grep -q "^bench_gpu_conv:" <<< "$targets" && benches="$benches bench_gpu_conv"
  grep -q "^bench_gpu_models:" <<< "$targets" && benches="$benches bench_gpu_models"
  echo "$benches" > "$RES/benches"
  echo "== build: glassbox, $(cd tests && ls engine/*/*_gpu_test.cpp | wc -l) gpu test files (test_gpu), $benches" \
       "(-j ${JOBS:-$(nproc)})"
  # shellcheck disable=SC2086
  if ! cmake --build "$BUILD" -j "${JOBS:-$(nproc)}" --target test_gpu $benches > "$RES/build.log" 2>&1; then
    grep -E "error|Error|FAILED" "$RES/build.log" | head -40
    keep configure.log build.log torch_probe.log; note build failed; exit 2
  fi
  note build "ok $(($(date +%s) - start)) s ($(grep -c '^\[' "$RES/build.log") steps, -j ${JOBS:-$(nproc)}, $(nproc) cores)"
  echo "== build done in $(($(date +%s) - start)) s"
  keep configure.log build.log torch_probe.log
}
need_build() {
  if [ "$(noted build | cut -d' ' -f1)" != ok ] || [ ! -x "$BUILD/tests/test_gpu" ]; then
    echo "== FAILED: no finished build in $BUILD: run \`bench/gpu/run.sh build $BUILD\` first (a fresh machine has none)"
    exit 2
  fi
}

# ---- tests ---------------------------------------------------------------------------------------------------------
do_tests() {
  local start rc
  need_build
  start=$(date +%s)
  echo "== gpu tests${GPU_TESTS_REGEX:+ matching $GPU_TESTS_REGEX}"
  GLASSBOX_EXPECT_GPU=1 ctest --test-dir "$BUILD" -L gpu ${GPU_TESTS_REGEX:+-R "$GPU_TESTS_REGEX"} \
    --timeout "${TEST_TIMEOUT:-300}" --output-on-failure -j 1 2>&1 | tee "$RES/tests.log"
  rc=${PIPESTATUS[0]}
  note tests "rc $rc $(($(date +%s) - start)) s"
  keep tests.log
  return "$rc"
}

# ---- benches -------------------------------------------------------------------------------------------------------
do_bench() {
  local start rc=0 b
  need_build
  start=$(date +%s)
  echo "== benchmarks"
  : > "$RES/bench.jsonl"
  for b in $(cat "$RES/benches"); do
    timeout "${BENCH_TIMEOUT:-300}" "$BUILD/bench/gpu/$b" 2>&1 | tee -a "$RES/bench.jsonl"
    local brc=${PIPESTATUS[0]}
    if [ "$brc" != 0 ]; then echo "{\"bench\": \"$b\", \"failed\": \"exit $brc\"}" | tee -a "$RES/bench.jsonl"; rc=1; fi
  done
  note bench "rc $rc $(($(date +%s) - start)) s"
  keep bench.jsonl
  return "$rc"
}

# ---- summary -------------------------------------------------------------------------------------------------------
do_summary() {
  {
    echo
    gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2> /dev/null | head -1)
    echo "== summary (${gpu:-no GPU: nvidia-smi saw none})"
    printf "%-28s %s\n" "build" "$(noted build || true)"
    if [ -f "$RES/tests.log" ]; then
      printf "%-28s %s\n" "gpu tests" "$(grep -E 'tests passed|tests failed' "$RES/tests.log" | tail -1) ($(noted tests))"
      # the NCCL smoke test: a group of one on this GPU, and 2 ranks (MPI and TCP id exchange) where there are 2 GPUs
      grep -E "Test +#[0-9]+: engine\.distributed\.nccl_backend_gpu" "$RES/tests.log" |
        sed -E 's/^.*Test +#[0-9]+: engine\.distributed\.(nccl_backend_gpu[.a-z0-9_]*)[ .]+/\1 /' |
        while read -r name status rest; do printf "%-28s %s\n" "$name" "$status $rest"; done
    else
      printf "%-28s %s\n" "gpu tests" "not run"
    fi
    if [ -f "$RES/bench.jsonl" ]; then
      python3 - "$RES/bench.jsonl" << 'PY' 2> /dev/null || cat "$RES/bench.jsonl"
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
      printf "%-28s %s\n" "benchmarks" "$(noted bench)"
    else
      printf "%-28s %s\n" "benchmarks" "not run"
    fi
  } | tee "$RES/summary.txt"
  keep summary.txt
}

case "$step" in
  build) prepare; do_build ;;
  tests) prepare; do_tests; rc=$?; do_summary; exit "$rc" ;;
  bench) prepare; do_bench; rc=$?; do_summary; exit "$rc" ;;
  summary) do_summary ;;
  all)
    start=$(date +%s)
    prepare; do_build
    do_tests; rc=$?
    do_bench
    do_summary
    printf "%-28s %s\n" "total" "$(($(date +%s) - start)) s"
    exit "$rc" ;;
esac
