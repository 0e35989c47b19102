#!/usr/bin/env bash
# bench/gpu/fetch-deps.sh — run HERE (Debian 12, with network) before a device run: downloads the Debian packages
# glassbox's build needs that a GPU machine's image may lack (it has CUDA, CMake, ninja and PyTorch, but no Debian
# development packages, and no network) into .gpu-deps/ (git-ignored): SQLite's, zlib's and OpenBLAS's headers and
# libraries, doctest, nlohmann-json and CLI11. Name .gpu-deps in the device run's `carry`; bench/gpu/run.sh unpacks
# them into its build folder (dpkg -x: never into /) and puts them first on CMake's and the loader's paths.
# Idempotent: packages already there are kept.
set -euo pipefail
cd "$(dirname "$0")/../.."
packages=(libsqlite3-dev libsqlite3-0 zlib1g-dev zlib1g libopenblas-pthread-dev libopenblas0-pthread libgfortran5
          libquadmath0 doctest-dev nlohmann-json3-dev libcli11-dev)
mkdir -p .gpu-deps
cd .gpu-deps
missing=()
for p in "${packages[@]}"; do compgen -G "${p}_*.deb" > /dev/null || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  apt-get download -qq "${missing[@]}" 2> /dev/null || { apt-get update -qq && apt-get download -qq "${missing[@]}"; }
fi
echo "bench/gpu/fetch-deps.sh: ${#packages[@]} packages in .gpu-deps ($(du -sh . | cut -f1)); carry .gpu-deps"
