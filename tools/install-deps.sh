#!/usr/bin/env bash
# tools/install-deps.sh [demo | torch2] — installs what glassbox needs to build and test, from Debian's packages.
# Idempotent and silent when everything is already there; `make test` calls it first. `make demo` calls it with
# `demo`: only what the demo builds and runs (no libtorch, PyTorch or Clang: the oracle tests, the benchmarks'
# peer and the sanitizer builds need those, and they are most of the download).
# `torch2` (optional, run by hand; never needed by make demo or make test): the second peer, libtorch 2.x from PyPI's
# torch wheel, into .peers/torch2/ (540 MB download, 1.6 GB unpacked; its Python half is not used and not importable
# without the wheel's CUDA packages, which are not installed). The next configure finds it (cmake/torch2.cmake).
set -euo pipefail

TORCH2_VERSION=2.15.0
if [ "${1:-}" = torch2 ]; then
  root=$(cd "$(dirname "$0")/.." && pwd)
  dest=$root/.peers/torch2
  if grep -qs "PACKAGE_VERSION \"$TORCH2_VERSION\"" "$dest/torch/share/cmake/Torch/TorchConfigVersion.cmake"; then exit 0; fi
  "$0"  # the build's own packages first
  if ! python3 -m pip --version >/dev/null 2>&1; then
    echo "glassbox: installing python3-pip (once), to fetch PyPI's torch wheel..."
    apt-get install -y -qq --no-install-recommends python3-pip >/dev/null
  fi
  echo "glassbox: fetching libtorch $TORCH2_VERSION from PyPI's torch wheel into $dest (once; 540 MB)..."
  rm -rf "$dest"
  # --no-deps: the C++ libraries need none of the wheel's Python or CUDA packages for the CPU peer
  python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-deps --target "$dest" "torch==$TORCH2_VERSION"
  echo "glassbox: libtorch $TORCH2_VERSION installed; reconfigure (make bench does) and bench_<name>_torch2 is built."
  exit 0
fi

PACKAGES=(
  cmake ninja-build g++ ccache pkg-config  # the build
  lld                                      # LLVM's linker: links the tests and programs in a third of ld's time
  libopenblas-dev                          # GEMM for the CPU ops
  libxsmm-dev                              # libxsmm: small matrix products (engine/ops/small_gemm.cpp)
  libdnnl-dev                              # oneDNN: float convolutions (engine/ops/conv_onednn.cpp)
  libstb-dev                               # stb_image: the DataLoader's image decoding (engine/data/)
  doctest-dev                              # the test framework
  libsqlite3-dev                           # the trace file (traces/)
  libcli11-dev zlib1g-dev                  # the glassbox command (tools/): arguments, .json.gz export
  nlohmann-json3-dev                       # safetensors headers (engine/io/); the tests parse the Chrome export
  libimgui-dev libglfw3-dev libgl-dev libstb-dev  # the viewer (viewer/): Dear ImGui 1.86, GLFW, OpenGL 3, PNG
  fonts-dejavu-core                        # the viewer's font (falls back to ImGui's own without it)
  xvfb xauth libgl1-mesa-dri               # the viewer's screenshots (tests, and the demo without a display)
)
if [ "${1:-}" != demo ]; then
  PACKAGES+=(
    libtorch-dev                           # PyTorch's C++ API: the oracle in tests and the peer in benchmarks
    python3-torch                          # the .pt import tests write their files with torch.save
    clang libclang-rt-14-dev               # make test-options: Clang, its sanitizer and libFuzzer runtimes (fuzz/)
    libopenmpi-dev openmpi-bin             # gb::distributed's MPI backend and the 2-rank tests (mpirun)
    sqlite3 python3                        # the docs' quoted outputs, rerun and checked (tools/doc_outputs.py)
  )
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then missing+=("$p"); fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
  echo "glassbox: this script installs Debian packages with apt-get, which this system does not have." >&2
  echo "Install the equivalents of: ${missing[*]} with your package manager, then run make again." >&2
  exit 1
fi
SUDO=()
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO=(sudo); else
    echo "glassbox: missing packages (${missing[*]}) and not running as root." >&2
    echo "Run as root, or: apt-get install ${missing[*]}" >&2
    exit 1
  fi
fi
echo "glassbox: installing ${missing[*]} (once)..."
"${SUDO[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "glassbox: dependencies installed."
