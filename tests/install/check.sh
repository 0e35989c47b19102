#!/usr/bin/env bash
# tests/install/check.sh BUILD_DIR SOURCE_DIR CXX — installs the build into a scratch prefix, then configures, builds
# (with the build's own C++ compiler: a Clang sanitizer build needs Clang's runtimes) and runs
# tests/install/consumer against it with find_package(glassbox). Registered with CTest (label install).
set -euo pipefail
build="$1"
src="$2"
cxx="${3:-c++}"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
cmake --install "$build" --prefix "$scratch/prefix" > "$scratch/install.log" || { cat "$scratch/install.log"; exit 1; }
cmake -S "$src/tests/install/consumer" -B "$scratch/consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$scratch/prefix" > "$scratch/configure.log" 2>&1 || { cat "$scratch/configure.log"; exit 1; }
cmake --build "$scratch/consumer" > "$scratch/build.log" 2>&1 || { cat "$scratch/build.log"; exit 1; }
"$scratch/consumer/consumer"
