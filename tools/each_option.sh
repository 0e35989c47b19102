#!/usr/bin/env bash
# tools/each_option.sh — build each of docs/BUILD.md's options ALONE (the default build plus that one option) in its
# own folder, run its tests, and print one line per option: what it built, how many tests passed, how long it took.
#
#   tools/each_option.sh                 every option below, one after another (on 2 cores: about an hour and a half)
#   tools/each_option.sh debug fuzz      only these
#
# `make test-options` and `make test-tsan` build the off-by-default options together (what CI can afford); this
# script is the check that each one also works by itself, as a user who sets one flag gets it. Build folders are
# build-alone-<name>/ (ignored by git; delete them after). A failed option prints its log's tail and the script goes
# on with the next; the exit status is the number of options that failed. Run `make deps` once first (and, for
# `fuzz`, apt-get install clang libclang-rt-14-dev: tools/install-deps.sh installs both).
set -uo pipefail
cd "$(dirname "$0")/.."

JOBS=${JOBS:-$(nproc)}
TSAN_TESTS="test_engine_core test_engine_optim test_engine_distributed test_engine_data test_instrument test_viewer"
# make test-tsan's test list, from the Makefile (one place)
TSAN_REGEX=$(grep -o "\-R '[^']*'" Makefile | head -1 | sed "s/^-R '//; s/'$//; s/\\$\\$/\$/")

# name | cmake flags | ctest flags | build targets ("" = all)
options() {
  cat <<'EOF'
fuzz|-DGLASSBOX_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++||
sanitize|-DGLASSBOX_SANITIZE=ON||
debug|-DCMAKE_BUILD_TYPE=Debug||
cuda-off|-DGLASSBOX_CUDA=OFF||
tsan|-DGLASSBOX_TSAN=ON|TSAN|TSAN
lessons-off|-DGLASSBOX_BUILD_LESSONS=OFF||
werror|-DGLASSBOX_WERROR=ON||
probes-off|-DGLASSBOX_PROBES=OFF|-LE trace|
EOF
}

wanted=("$@")
failed=0
# The list on descriptor 3: the builds and tests inside the loop would otherwise read the rest of it from stdin.
while IFS='|' read -r -u 3 name flags ctest_flags targets; do
  if [ ${#wanted[@]} -gt 0 ] && [[ ! " ${wanted[*]} " == *" $name "* ]]; then continue; fi
  dir=build-alone-$name
  log=$dir.log
  start=$(date +%s)
  build_type=Release
  [[ $flags == *CMAKE_BUILD_TYPE=Debug* ]] && build_type=Debug
  # shellcheck disable=SC2086  # the flags are words. The optional second peer (libtorch 2.x) is left out: it is not
  # one of the options, and its benchmarks would add minutes to each build.
  if ! cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=$build_type -DGLASSBOX_TORCH2_DIR=NONE $flags >"$log" 2>&1; then
    echo "{\"option\":\"$name\",\"flags\":\"$flags\",\"result\":\"configure failed\",\"log\":\"$log\"}"
    tail -20 "$log"; failed=$((failed + 1)); continue
  fi
  build_targets=()
  [ "$targets" = TSAN ] && build_targets=(--target $TSAN_TESTS glassbox_trace_child glassbox)
  if ! cmake --build "$dir" -j "$JOBS" "${build_targets[@]}" >>"$log" 2>&1; then
    echo "{\"option\":\"$name\",\"flags\":\"$flags\",\"result\":\"build failed\",\"seconds\":$(($(date +%s) - start)),\"log\":\"$log\"}"
    grep -m5 -B2 -A8 "error" "$log" | head -40; failed=$((failed + 1)); continue
  fi
  built=$(date +%s)
  env_prefix=()
  if [ "$ctest_flags" = TSAN ]; then
    ctest_args=(-R "$TSAN_REGEX")
    env_prefix=(env OPENBLAS_NUM_THREADS=1 "TSAN_OPTIONS=halt_on_error=1 second_deadlock_stack=1")
  else
    # shellcheck disable=SC2206
    ctest_args=($ctest_flags)
  fi
  "${env_prefix[@]}" ctest --test-dir "$dir" --output-on-failure -j "$JOBS" "${ctest_args[@]}" >>"$log" 2>&1
  rc=$?
  summary=$(grep -E "tests passed|tests failed" "$log" | tail -1)
  result=passed
  if [ $rc -ne 0 ]; then result=failed; failed=$((failed + 1)); fi
  echo "{\"option\":\"$name\",\"flags\":\"$flags\",\"result\":\"$result\",\"tests\":\"$summary\",\"build_s\":$((built - start)),\"test_s\":$(($(date +%s) - built))}"
  [ $rc -ne 0 ] && grep -E "^\s*[0-9]+ - .*\((Failed|Timeout|SEGFAULT|Subprocess)" "$log" | head -20
done 3< <(options)
exit $failed
