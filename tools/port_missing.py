#!/usr/bin/env python3
"""tools/port_missing.py — the symbols a ported libtorch program uses that glassbox lacks, read from the compiler's
errors (tools/port.sh --check runs it): each with its uses (file:line) and the nearest glassbox spelling, the
compiler's own "did you mean" when it gives one, else the closest identifier in glassbox's headers.

  port_missing.py HEADERS_DIR < compiler-output      (GCC's diagnostics, LC_ALL=C)

Prints one line per symbol, most used first, and exits 1 when there is any, 0 when the output names none.
"""
import collections
import difflib
import os
import re
import sys

# What GCC says when a name is missing, and how to name the symbol from its groups.
PATTERNS = [
    # 'einsum' is not a member of 'gb'; did you mean 'prod'?
    (re.compile(r"'([\w:~]+)' is not a member of '([\w:]+)'"), lambda m: f"{m[2]}::{m[1]}"),
    # 'class gb::Tensor' has no member named 'cumprod'
    (re.compile(r"'(?:class|struct|union) ([\w:<>, ]+)' has no member named '(\w+)'"), lambda m: f"{m[1]}::{m[2]}"),
    # request for member 'name' in 'a.gb::Tensor::dtype()', which is of non-class type 'gb::ScalarType'
    (re.compile(r"request for member '(\w+)' in .*, which is of non-class type '([\w:]+)'"),
     lambda m: f"{m[2]}::{m[1]} ({m[2]} is an enum here, a class in libtorch)"),
    # 'MemoryFormat' in namespace 'gb' does not name a type
    (re.compile(r"'(\w+)' in namespace '([\w:]+)' does not name a (?:type|template type)"), lambda m: f"{m[2]}::{m[1]}"),
    # 'cumprod' was not declared in this scope (after using namespace gb)
    (re.compile(r"'(\w+)' was not declared in this scope"), lambda m: m[1]),
    # no matching function for call to 'gb::Tensor::to(...)': the name is there, this signature is not
    (re.compile(r"no matching (?:member )?function for call to '([\w:~<>]+)\("),
     lambda m: f"{m[1]}(...) (no overload takes these arguments)"),
]
# Spellings the compiler cannot guess: libtorch's name on the left, glassbox's on the right.
KNOWN = {
    "gb::ScalarType::name": "gb::to_string(dtype)",
    "gb::ScalarType::toString": "gb::to_string(dtype)",
    "gb::toString": "gb::to_string",
}
KEYWORDS = {"enum", "union", "const", "class", "struct", "return", "static", "inline", "template", "typename",
            "namespace", "using", "auto", "void", "bool", "double", "float", "this", "operator", "explicit"}
LOCATION = re.compile(r"^(.*?):(\d+):\d+: error: (.*)$")
DID_YOU_MEAN = re.compile(r"did you mean '([\w:]+)'")


def op_names(root):
    """The op table's op names (glassbox/ops/op_table.def): gb::<name> exists for the public ones."""
    path = os.path.join(root, "glassbox", "ops", "op_table.def")
    if not os.path.exists(path):
        return set()
    with open(path) as fh:
        return set(re.findall(r'^GB_OP\("(\w+)"', fh.read(), re.M))


def header_identifiers(root):
    names = set()
    for d, _, files in os.walk(root):
        for f in files:
            if f.endswith((".h", ".def")):
                with open(os.path.join(d, f), errors="replace") as fh:
                    names.update(re.findall(r"\b[A-Za-z_]\w{2,}\b", fh.read()))
    return sorted(names - KEYWORDS)


def main():
    if len(sys.argv) != 2:
        print("usage: port_missing.py HEADERS_DIR < compiler-output", file=sys.stderr)
        return 2
    idents = header_identifiers(sys.argv[1])
    ops = op_names(sys.argv[1])
    uses = collections.OrderedDict()
    hints = {}
    for line in sys.stdin:
        line = line.rstrip("\n").replace("\u2018", "'").replace("\u2019", "'")
        m = LOCATION.match(line)
        if not m:
            continue
        where = f"{os.path.basename(m[1])}:{m[2]}"
        for pattern, name in PATTERNS:
            p = pattern.search(m[3])
            if not p:
                continue
            symbol = name(p)
            uses.setdefault(symbol, [])
            if where not in uses[symbol]:
                uses[symbol].append(where)
            hint = DID_YOU_MEAN.search(m[3])
            if hint:
                hints[symbol] = hint[1]
            break
    if not uses:
        return 0
    print(f"port.sh: {len(uses)} symbol(s) the ported code uses that glassbox lacks (from compiling it against "
          "glassbox's headers; docs/PORTING.md lists what is known missing):")
    for symbol, where in sorted(uses.items(), key=lambda kv: -len(kv[1])):
        bare = re.sub(r"[(\s].*$", "", symbol)
        last = bare.split("::")[-1]
        near = KNOWN.get(bare) or (f"gb::{last}" if last in ops and bare != f"gb::{last}" else None) or hints.get(symbol)
        if not near:
            near = next((n for n in difflib.get_close_matches(last, idents, n=3, cutoff=0.8) if n != last), None)
        shown = ", ".join(where[:3]) + (f" (+{len(where) - 3})" if len(where) > 3 else "")
        print(f"  {symbol:<48} {len(where)} use(s): {shown}" + (f"   nearest glassbox spelling: {near}" if near else ""))
    return 1


if __name__ == "__main__":
    sys.exit(main())
