#!/usr/bin/env bash
# tools/port.sh — a libtorch program, renamed for glassbox (docs/PORTING.md): copies SOURCE (a file or a folder) to
# DEST and applies the rename rule there; SOURCE is never modified.
#
#   tools/port.sh examples/cpp/mnist ported/mnist
#
# The rule, on C/C++ sources (.cpp .cc .cxx .c .h .hpp .hh .hxx .cu .cuh):
#   #include <torch/...> (torch.h, extension.h, nn.h, ...)  ->  #include <glassbox/glassbox.h>   (once per file)
#   torch::  at::  c10::                                      ->  gb::
#   using namespace torch;  (at, c10)                         ->  using namespace gb;
#   TORCH_*  (TORCH_MODULE, TORCH_CHECK, TORCH_ARG, ...)      ->  GB_*
#   AT_ASSERT(...)  AT_ERROR(...)                             ->  GB_ASSERT(...)  GB_CHECK(false, ...)
#   c10::toString(dtype)                                      ->  gb::to_string(dtype)
# and on CMakeLists.txt / *.cmake:
#   find_package(Torch ...)        ->  find_package(glassbox REQUIRED)
#   ${TORCH_LIBRARIES}             ->  glassbox::engine
#   ${TORCH_INCLUDE_DIRS}, ${TORCH_CXX_FLAGS}: removed (the target carries them)
# Other files are copied unchanged. Lines that use what glassbox does not provide (TorchScript: torch::jit,
# <torch/script.h>; torch::hub) are listed at the end with their file and line: those need a person.
#
# --check: then compiles every ported C++ source against glassbox's headers (syntax only, ${CXX:-c++} -std=c++20,
# about 3 s a file) and lists the symbols glassbox lacks, each with its uses and the nearest glassbox spelling
# (tools/port_missing.py reads the compiler's errors): what stands between the port and a build.
#
# Exit status: 0 done (even with lines listed), 1 with --check: the ported code uses symbols glassbox lacks (or does
# not compile for another reason, shown), 2 bad arguments (nothing written).
set -euo pipefail

usage() {
  echo "usage: tools/port.sh [--check] SOURCE DEST   (SOURCE: a libtorch file or folder; DEST: a new path, not an" \
       "existing one)" >&2
  exit 2
}
check=0
if [ "${1:-}" = --check ]; then check=1; shift; fi
[ $# -eq 2 ] || usage
src=$1
dest=$2
if [ ! -e "$src" ]; then
  echo "port.sh: '$src' does not exist: give the libtorch program's file or folder" >&2
  exit 2
fi
if [ -e "$dest" ]; then
  echo "port.sh: '$dest' already exists: give a new path (port.sh never overwrites anything)" >&2
  exit 2
fi
case "$(realpath -m "$dest")/" in
  "$(realpath "$src")"/*)
    echo "port.sh: '$dest' is inside '$src': give a destination outside the source" >&2
    exit 2 ;;
esac

mkdir -p "$(dirname "$dest")"
cp -R "$src" "$dest"

# One sed program per kind of file. The include rule keeps the first torch include of a file (as glassbox.h) and
# drops the others, so a file that included several torch headers includes glassbox.h once.
cxx_rules='
/^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]torch\/[^>"]*[>"]/{
  x
  /seen/{x;d}
  s/.*/seen/
  x
  s/[<"]torch\/[^>"]*[>"]/<glassbox\/glassbox.h>/
}
s/\<using[[:space:]]\{1,\}namespace[[:space:]]\{1,\}\(torch\|at\|c10\)[[:space:]]*;/using namespace gb;/g
s/\<c10::toString(/gb::to_string(/g
s/\<at::toString(/gb::to_string(/g
s/\<torch::/gb::/g
s/\<at::/gb::/g
s/\<c10::/gb::/g
s/\<TORCH_\([A-Z0-9_]*\)/GB_\1/g
s/\<AT_ASSERT\>/GB_ASSERT/g
s/\<AT_ERROR(/GB_CHECK(false, /g
'
cmake_rules='
s/find_package([[:space:]]*Torch\>[^)]*)/find_package(glassbox REQUIRED)/g
s/"\${TORCH_LIBRARIES}"/glassbox::engine/g
s/\${TORCH_LIBRARIES}/glassbox::engine/g
s/\${TORCH_INCLUDE_DIRS}//g
s/ *\${TORCH_CXX_FLAGS}//g
'

changed=0
notes=()
while IFS= read -r -d '' f; do
  rel=${f#"$dest"/}
  [ "$f" = "$dest" ] && rel=$(basename "$f")
  case "$f" in
    *.cpp|*.cc|*.cxx|*.c|*.h|*.hpp|*.hh|*.hxx|*.cu|*.cuh) rules=$cxx_rules ;;
    */CMakeLists.txt|CMakeLists.txt|*.cmake) rules=$cmake_rules ;;
    *) continue ;;
  esac
  # What the rename cannot port, found before renaming (the original spelling).
  while IFS= read -r hit; do
    notes+=("$rel:$hit")
  done < <(grep -nE 'torch::jit|torch/script\.h|torch::hub|torch::package' "$f" | cut -c1-120 || true)
  tmp=$(mktemp)
  sed -e "$rules" "$f" > "$tmp"
  if ! cmp -s "$f" "$tmp"; then
    cat "$tmp" > "$f"  # keeps the file's mode
    changed=$((changed + 1))
  fi
  rm -f "$tmp"
done < <(find "$dest" -type f -print0 | sort -z)

echo "port.sh: copied '$src' to '$dest' and renamed in $changed file(s)"
if [ ${#notes[@]} -gt 0 ]; then
  echo "port.sh: ${#notes[@]} line(s) use what glassbox does not provide (TorchScript, hub; docs/PORTING.md):"
  printf '  %s\n' "${notes[@]}"
fi

if [ $check = 1 ]; then
  root=$(cd "$(dirname "$0")/.." && pwd)
  log=$(mktemp)
  trap 'rm -f "$log"' EXIT
  compiled=0
  while IFS= read -r -d '' f; do
    # the port's own headers by their folders, glassbox's (engine/include; the repository root for instrument/)
    LC_ALL=C "${CXX:-c++}" -std=c++20 -fsyntax-only -I"$(dirname "$f")" -I"$dest" -I"$root/engine/include" -I"$root" \
      "$f" >>"$log" 2>&1 || true
    compiled=$((compiled + 1))
  done < <(find "$dest" -type f \( -name '*.cpp' -o -name '*.cc' -o -name '*.cxx' \) -print0 | sort -z)
  if python3 "$root/tools/port_missing.py" "$root/engine/include" <"$log"; then
    if grep -q ": error:" "$log"; then
      echo "port.sh: $compiled file(s) compiled against glassbox's headers with errors that name no missing symbol:"
      grep -m 10 ": error:" "$log" | sed 's/^/  /'
      exit 1
    fi
    echo "port.sh: $compiled file(s) compile against glassbox's headers: nothing glassbox lacks"
  else
    exit 1
  fi
fi
