#!/usr/bin/env bash
# bench/gpu/dry-run.sh — bench/gpu/run.sh's device sequence rehearsed on a machine WITHOUT a GPU (Debian 12, root,
# network to a Debian mirror), in a bare Debian prefix that has only what the GPU machines' image has (a C++ compiler,
# CMake, ninja, python3; no Debian development packages, no MPI, no PyTorch), so that every other dependency must come
# from the carried .gpu-deps alone. It
#   1. builds the prefix if it is missing (mmdebstrap --variant=minbase bookworm from this machine's Debian mirror, with
#      build-essential cmake ninja-build python3 ccache; about 30 s and 300 MB) and checks none of the carried packages
#      is installed in it;
#   2. runs bench/gpu/fetch-deps.sh here if .gpu-deps is missing;
#   3. runs `bench/gpu/run.sh build`, `tests`, `bench` in it, each timed, under chroot in a private mount namespace
#      (unshare -m), with /usr/local/cuda bound read-only, the repository bound at its own path and the host's ccache
#      shared (same source path, so a second dry run hits), no nvcc on PATH (run.sh must find it) and JOBS=2;
#   4. checks the expected end: the build finished with CUDA, MPI and the 2-rank NCCL tests registered, every gpu test
#      failed with "no usable CUDA device" (GLASSBOX_EXPECT_GPU=1: a missing device fails, tests/support/gpu_main.cpp),
#      the benchmarks said they skipped, and nothing failed to load. Exit 0 when so.
# PyTorch is not in the prefix: the dry run takes the torch-less path (no bench_gpu_models). cuDNN and NCCL come from
# this machine's toolkit; with DRYRUN_PIP_NVIDIA=1 the toolkit is shown without them (an overlay hides them) and a
# pip-like nvidia/ tree (cudnn/, nccl/, cu13/, the .so.N names pip ships, linked to the toolkit's files) is on
# python3's path, as on the GPU machines: run.sh must take cuDNN and NCCL from there (default BUILD_DIR then
# build-gpu-dry-pip).
#
#   bench/gpu/dry-run.sh [BUILD_DIR]      (default build-gpu-dry, inside the repository; DRYRUN_ROOT: the prefix,
#                                          default /work/dryrun/bookworm; STEPS: default "build tests bench")
#
# It is not part of `make test` (a first run builds the CUDA sources on this machine's cores: see
# docs/PERFORMANCE.md, "The GPU check", for the times). Needs root, mmdebstrap and unshare.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
PIP=${DRYRUN_PIP_NVIDIA:-0}
suffix=""; if [ "$PIP" = 1 ]; then suffix=-pip; fi
BUILD=${1:-build-gpu-dry$suffix}
case "$BUILD" in /*) ;; *) BUILD=$repo/$BUILD ;; esac
ROOTFS=${DRYRUN_ROOT:-/work/dryrun/bookworm}
STEPS=${STEPS:-build tests bench}
carried_here=(libsqlite3-dev zlib1g-dev libopenblas-pthread-dev libopenblas0-pthread doctest-dev nlohmann-json3-dev
              libcli11-dev libopenmpi-dev libopenmpi3 openmpi-bin libpmix2 libhwloc15 libfabric1 libucx0)

if [ ! -x "$ROOTFS/usr/bin/cmake" ]; then
  mirror=$(sed -n 's/^URIs: *\(http[^ ]*debian\)$/\1/p; s/^deb \(http[^ ]*debian\)\/\? bookworm .*/\1/p' \
             /etc/apt/sources.list /etc/apt/sources.list.d/*.sources 2> /dev/null | head -1)
  mirror=${mirror:-http://deb.debian.org/debian}
  echo "== dry run: building the prefix $ROOTFS (minbase bookworm from $mirror)"
  command -v mmdebstrap > /dev/null || apt-get install -y -q mmdebstrap
  mkdir -p "$(dirname "$ROOTFS")"
  mmdebstrap --variant=minbase --include=build-essential,cmake,ninja-build,python3,ccache bookworm "$ROOTFS" "$mirror"
fi
installed=$(chroot "$ROOTFS" dpkg-query -W -f '${Package} ${db:Status-Abbrev}\n' 2> /dev/null | awk '$2 ~ /^ii/{print $1}')
for p in "${carried_here[@]}"; do
  if grep -qx "$p" <<< "$installed"; then echo "== dry run: $p is installed in $ROOTFS: not a bare prefix"; exit 2; fi
done
[ -d .gpu-deps ] || bench/gpu/fetch-deps.sh
rm -f "$BUILD/results/tests.log" "$BUILD/results/bench.jsonl"  # no stale results checked below; the build's stay
mkdir -p "$BUILD" /root/.cache/ccache

# the steps, inside: a clean environment (no nvcc on PATH), the host's ccache shared
inner=$(cat << EOF
cd "$repo" || exit 2
for s in $STEPS; do
  t0=\$(date +%s)
  bench/gpu/run.sh \$s "$BUILD"; rc=\$?
  echo "== dry run: step \$s: exit \$rc in \$((\$(date +%s) - t0)) s"
  if [ \$s = build ] && [ \$rc != 0 ]; then break; fi
done
EOF
)
# shellcheck disable=SC2016
unshare -m -- bash -euo pipefail -c '
  R=$1 repo=$2 inner=$3 pip=$4
  mount --make-rprivate /
  mkdir -p "$R/usr/local/cuda" "$R$repo" "$R/root/.cache/ccache"
  mount -t proc proc "$R/proc"
  mount --rbind /sys "$R/sys"
  mount --rbind /dev "$R/dev"
  cuda=$(realpath /usr/local/cuda)
  if [ "$pip" = 1 ]; then
    # the toolkit without its cuDNN and NCCL (an overlay whose top layer holds whiteouts for them), and a pip-like
    # nvidia/ tree (cudnn, nccl, cu13: include/ and lib/ with the .so.N names pip ships) linking to the real files
    w=$(dirname "$R")/cuda-without-cudnn-nccl
    mkdir -p "$w/include" "$w/lib"
    for f in "$cuda"/include/cudnn* "$cuda"/include/nccl* "$cuda"/lib/libcudnn* "$cuda"/lib/libnccl*; do
      rel=${f#"$cuda"/}; [ -e "$w/$rel" ] || mknod "$w/$rel" c 0 0
    done
    mount -t overlay overlay -o "lowerdir=$w:$cuda" "$R/usr/local/cuda"
    mkdir -p "$R/opt/cuda-real" && mount --bind "$cuda" "$R/opt/cuda-real" && mount -o remount,bind,ro "$R/opt/cuda-real"
    n=$R/opt/pip/nvidia && rm -rf "$n" && mkdir -p "$n"/cudnn/include "$n"/cudnn/lib "$n"/nccl/include "$n"/nccl/lib "$n"/cu13/lib
    for f in "$cuda"/include/cudnn*; do ln -s "/opt/cuda-real/include/${f##*/}" "$n/cudnn/include/"; done
    for f in "$cuda"/include/nccl*; do ln -s "/opt/cuda-real/include/${f##*/}" "$n/nccl/include/"; done
    for f in "$cuda"/lib/libcudnn*.so.9; do ln -s "/opt/cuda-real/lib/${f##*/}" "$n/cudnn/lib/"; done
    ln -s /opt/cuda-real/lib/libnccl.so.2 "$n/nccl/lib/"
    for f in "$cuda"/lib/libcublas*.so.13 "$cuda"/lib/libnvrtc*.so.13*; do ln -s "/opt/cuda-real/lib/${f##*/}" "$n/cu13/lib/"; done
  else
    mount --bind "$cuda" "$R/usr/local/cuda" && mount -o remount,bind,ro "$R/usr/local/cuda"
  fi
  mount --bind "$repo" "$R$repo"
  mount --bind /root/.cache/ccache "$R/root/.cache/ccache"
  exec chroot "$R" /usr/bin/env -i HOME=/root TERM=dumb PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    CCACHE_BASEDIR=/work JOBS=${JOBS:-2} \
    $([ "$pip" = 1 ] && echo PYTHONPATH=/opt/pip) /bin/bash -c "$inner"
' dry-run "$ROOTFS" "$repo" "$inner" "$PIP" 2>&1 | tee "$BUILD/dry-run.log"

# the expected end: no device, and everything else in place
res=$BUILD/results
fail() { echo "== dry run: NOT as expected: $*"; exit 1; }
grep -q "^build ok" "$res/steps" || fail "the build did not finish ($res/build.log)"
if [ "$PIP" = 1 ]; then
  grep -q "cuDNN: pip.*NCCL: pip" "$BUILD/dry-run.log" || fail "cuDNN and NCCL were not taken from the pip-like tree"
fi
[[ " $STEPS " == *" tests "* ]] && [[ " $STEPS " == *" bench "* ]] || { echo "== dry run: steps $STEPS done"; exit 0; }
! grep -q "glassbox: MPI not found" "$res/configure.log" || fail "FindMPI did not find the carried Open MPI ($res/configure.log)"
[ -f "$res/tests.log" ] || fail "the tests did not run"
total=$(sed -n 's/.*tests failed out of \([0-9]*\).*/\1/p' "$res/tests.log" | tail -1)
registered=$(grep -cE "Test +#[0-9]+:" "$res/tests.log" || true)
nodevice=$(grep -cE "^(Output from rank [0-9]+: )?FAILED: no usable CUDA device" "$res/tests.log" || true)
grep -qE "Test +#[0-9]+: engine\.distributed\.nccl_backend_gpu\.2ranks " "$res/tests.log" ||
  fail "the 2-rank NCCL tests are not registered (MPI or NCCL missing)"
grep -qE "error while loading shared libraries|not found \(required by|cannot open shared object" \
  "$res/tests.log" "$res/bench.jsonl" && fail "a library did not load"
[ -n "$total" ] && [ "$registered" = "$total" ] || fail "tests.log does not end with CTest's count"
passed=$(grep -cE "Test +#[0-9]+: .* Passed" "$res/tests.log" || true)
[ "$passed" = 0 ] || fail "$passed gpu tests passed without a GPU"
[ "$nodevice" -ge "$total" ] || fail "$nodevice of $total tests said \"no usable CUDA device\""
skipped=$(grep -c '"skipped"' "$res/bench.jsonl" || true)
[ "$skipped" -ge 1 ] && ! grep -q '"failed"' "$res/bench.jsonl" || fail "the benchmarks did not skip cleanly"
echo "== dry run: as expected: built with CUDA and MPI, $total gpu tests (the 2-rank NCCL ones among them) each failed"
echo "   with \"no usable CUDA device\", $skipped benchmarks skipped: $(head -1 "$res/bench.jsonl")"
