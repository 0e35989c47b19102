#!/usr/bin/env bash
# bench/gpu/fetch-deps.sh — run HERE (Debian 12, with network) before a device run: downloads the Debian packages
# glassbox's build needs that a GPU machine's image may lack (it has CUDA, CMake, ninja and PyTorch, but no Debian
# development packages, and no network) into .gpu-deps/ (git-ignored): SQLite's, zlib's and OpenBLAS's headers and
# libraries, doctest, nlohmann-json, CLI11 and stb_image (engine/data/image_decode.cpp), and Open MPI (headers, libmpi, mpirun and what they load at run time:
# without MPI the 2-rank NCCL tests are not registered). Name .gpu-deps in the device run's `carry`; bench/gpu/run.sh
# unpacks them into its build folder (dpkg -x: never into /) and puts them first on CMake's and the loader's paths.
# The list was resolved with `apt-cache depends` (Depends only) minus what a minimal Debian with build-essential has
# (libc6, libstdc++6, libgcc-s1, zlib1g's kin, libudev1, libssl3 ...), and checked by bench/gpu/dry-run.sh in such a
# prefix. Left out on purpose: openssh-client (mpirun starts local ranks without it: run.sh sets plm_rsh_agent),
# libhwloc-plugins (hwloc's optional PCI / OpenCL / X11 discovery), ibverbs-providers (no InfiniBand there).
# Idempotent: packages already there are kept; pass --clean to download them again.
set -euo pipefail
cd "$(dirname "$0")/../.."
packages=(libsqlite3-dev libsqlite3-0 zlib1g-dev zlib1g libopenblas-pthread-dev libopenblas0-pthread libgfortran5
          libquadmath0 doctest-dev nlohmann-json3-dev libcli11-dev libstb-dev libstb0
          # Open MPI 4.1 (Debian 12): the headers and libmpi.so, the library, mpirun / mpicxx, the wrapper data files
          libopenmpi-dev libopenmpi3 openmpi-bin openmpi-common
          # ... and what libmpi, its MCA components and mpirun load
          libpmix2 libhwloc15 libevent-core-2.1-7 libevent-pthreads-2.1-7 libfabric1 libucx0 libibverbs1 librdmacm1
          libpsm2-2 libpsm-infinipath1 libnl-3-200 libnl-route-3-200 libnuma1 libmunge2 libbsd0 libmd0)
[ "${1:-}" = --clean ] && rm -rf .gpu-deps
mkdir -p .gpu-deps
cd .gpu-deps
missing=()
for p in "${packages[@]}"; do compgen -G "${p}_*.deb" > /dev/null || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  apt-get download -qq "${missing[@]}" 2> /dev/null || { apt-get update -qq && apt-get download -qq "${missing[@]}"; }
fi
echo "bench/gpu/fetch-deps.sh: ${#packages[@]} packages in .gpu-deps ($(du -sh . | cut -f1)); carry .gpu-deps"
