#!/usr/bin/env python3
"""tools/doc_outputs.py — reruns the commands whose output the docs quote, and checks the quotes still match.

A quoted output in README.md, docs/*.md or docs/design/*.md is a fenced block right after a marker line naming the command that makes it:

    <!-- output: build/samples/plan_memory --model mlp --batch 8 -->
    ```
    $ build/samples/plan_memory --model mlp --batch 8      (a first line starting with "$ " is the command shown)
    glassbox 0.1.0 — plan_memory: ...
    ...
    ```

The command runs under bash from the repository root, `build/` meaning the build folder given (--build; the markers
write `build/...` as a reader types it), `$TMP` a scratch folder that all markers of one run share (a marker may
make a trace that a later one reads), with the build's tools/ first on PATH (so `glassbox` is the built one). The
block is a template of the output, line by line, in order, with no gap unless the block says so:
  - a line `...` (spaces around it allowed) stands for any number of lines, none included;
  - a line ending in `...` matches any line that starts with the text before it;
  - durations (`6.010ms`, `0.01 s`) match any duration: they change from run to run.
Everything else must match exactly (trailing spaces ignored).

  tools/doc_outputs.py [--build DIR] [--check | --print] [FILE ...]     (default --check, every doc with a marker)

--check exits 1 after naming each quote that no longer matches (the doc's line, the quoted line, and the command's
real output around where it should be); --print reruns every command and prints its output, to update a quote
from. CTest runs --check as `docs.outputs`.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

MARKER = re.compile(r"^<!-- output: (.*) -->\s*$")
DURATION = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ns|us|µs|ms|s)\b")


def find_quotes(path):
    """Yields (marker line number, command, template lines) for each marker in the file."""
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = MARKER.match(lines[i])
        if not m:
            i += 1
            continue
        start = i + 1
        if start >= len(lines) or not lines[start].startswith("```"):
            raise SystemExit(f"{path}:{i + 1}: an output marker must be followed at once by a fenced block (```)")
        end = start + 1
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        if end == len(lines):
            raise SystemExit(f"{path}:{start + 1}: the fenced block after the output marker is never closed")
        body = lines[start + 1:end]
        if body and body[0].startswith("$ "):
            body = body[1:]
        yield i + 1, m.group(1), body
        i = end + 1


def normalize(line):
    return DURATION.sub("<duration>", line.rstrip())


def line_matches(template, actual):
    t = template.rstrip()
    if t.endswith("...") and t.strip() != "...":
        return normalize(actual).startswith(normalize(t[:-3].rstrip()))
    return normalize(t) == normalize(actual)


def match(template, output, ti=0, oi=0):
    """Whether output[oi:] matches template[ti:]; returns None when it does, else (template index, output index) of
    the furthest mismatch."""
    best = (ti, oi)
    while ti < len(template):
        if template[ti].strip() == "...":
            if ti + 1 == len(template):
                return None
            for k in range(oi, len(output) + 1):
                r = match(template, output, ti + 1, k)
                if r is None:
                    return None
                best = max(best, r)
            return best
        if oi < len(output) and line_matches(template[ti], output[oi]):
            ti, oi = ti + 1, oi + 1
            best = max(best, (ti, oi))
            continue
        return max(best, (ti, oi))
    return None if oi == len(output) else (ti, oi)


def run(command, build, tmp):
    command = re.sub(r"(?<![\w/.-])build/", build.rstrip("/") + "/", command)
    env = dict(os.environ, TMP=tmp, PATH=os.path.join(build, "tools") + os.pathsep + os.environ.get("PATH", ""))
    p = subprocess.run(["bash", "-c", command], cwd=REPO, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=600)
    return p.stdout.rstrip("\n").split("\n")


REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true")
    mode.add_argument("--print", action="store_true")
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    files = a.files or [os.path.join(REPO, "README.md")] + [
        os.path.join(REPO, d, f) for d in ("docs", os.path.join("docs", "design"))
        if os.path.isdir(os.path.join(REPO, d)) for f in sorted(os.listdir(os.path.join(REPO, d))) if f.endswith(".md")]
    failures = quotes = 0
    with tempfile.TemporaryDirectory(prefix="doc_outputs.") as tmp:
        for path in files:
            rel = os.path.relpath(path, REPO)
            for line_no, command, template in find_quotes(path):
                quotes += 1
                output = run(command, build, tmp)
                if a.print:
                    print(f"== {rel}:{line_no}: {command}")
                    print("\n".join(output))
                    continue
                r = match(template, output)
                if r is None:
                    continue
                failures += 1
                ti, oi = r
                quoted = template[ti] if ti < len(template) else "(the quote ends here)"
                print(f"{rel}:{line_no + 2 + ti}: the quoted output of `{command}` no longer matches")
                print(f"  quoted:  {quoted}")
                lo, hi = max(0, oi - 2), min(len(output), oi + 3)
                print("  real output there:" if output[lo:hi] else "  real output: (ends before this line)")
                for k in range(lo, hi):
                    print(f"  {'>' if k == oi else ' '} {output[k]}")
    if not a.print:
        if quotes == 0:
            print("doc_outputs: no output markers found")
            return 1
        print(f"doc_outputs: {quotes - failures} of {quotes} quoted outputs match"
              + ("" if not failures else f"; update the quotes (tools/doc_outputs.py --print shows the real ones)"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
