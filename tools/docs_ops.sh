#!/usr/bin/env bash
# tools/docs_ops.sh — the docs' op table, generated from the engine's (engine/include/glassbox/ops/op_table.def):
# replaces what lies between `<!-- ops:begin -->` and `<!-- ops:end -->` in docs/design/ops.md with
# `glassbox ops --format markdown`. With --check it changes nothing and exits 1 when the docs' copy differs (the
# CTest test tools.docs_ops), saying how to fix it.
#   tools/docs_ops.sh [--check] [path/to/glassbox]     (default: build/tools/glassbox)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
check=0
if [[ ${1:-} == --check ]]; then check=1; shift; fi
bin=${1:-$root/build/tools/glassbox}
doc=$root/docs/design/ops.md
[[ -x $bin ]] || { echo "docs_ops.sh: no glassbox command at $bin; build it (ninja -C build glassbox) or pass its path" >&2; exit 2; }
grep -q '^<!-- ops:begin -->$' "$doc" && grep -q '^<!-- ops:end -->$' "$doc" ||
  { echo "docs_ops.sh: $doc has no <!-- ops:begin --> / <!-- ops:end --> lines" >&2; exit 2; }
table=$(mktemp)
new=$(mktemp)
trap 'rm -f "$table" "$new"' EXIT
"$bin" ops --format markdown >"$table"
awk -v table="$table" '
  /^<!-- ops:begin -->$/ { print; while ((getline line < table) > 0) print line; skip = 1; next }
  /^<!-- ops:end -->$/ { skip = 0 }
  !skip { print }' "$doc" >"$new"
if ((check)); then
  if ! cmp -s "$doc" "$new"; then
    diff -u "$doc" "$new" | head -40 >&2 || true
    echo "docs_ops.sh: docs/design/ops.md's op table differs from glassbox/ops/op_table.def; run tools/docs_ops.sh" >&2
    exit 1
  fi
  exit 0
fi
cp "$new" "$doc"
