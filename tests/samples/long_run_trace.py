#!/usr/bin/env python3
"""tests/samples/long_run_trace.py TRACE STEPS FAULT — what the long_run sample's trace must hold (issue [Long runs],
"How it is checked"): the summary of every step it ran, the first non-finite value at the corrupt batch's step named
by its op and module, full op-level detail (spans with op details, autograd nodes, memory events) in the steps just
before it (the flight recorder's window), detail elsewhere only in the policy's windows, memory events that replay
exactly, and a trace within the size target (<= 1 KB per step after the first 500 steps). Prints what it measured;
exits 1 naming the first thing that is wrong."""
import os
import sqlite3
import sys

path, steps, fault = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)


def one(sql, *args):
    return db.execute(sql, args).fetchone()[0]


def fail(why):
    print(f"long_run_trace.py: {path}: {why}")
    sys.exit(1)


ran = one("SELECT count(*) FROM steps")
last = one("SELECT max(step) FROM steps")
if ran != last + 1 or last < fault:
    fail(f"the summary has {ran} steps rows up to step {last}: every step from 0 to past {fault} must have one")
if one("SELECT count(*) FROM steps WHERE forward_ns IS NULL OR backward_ns IS NULL OR optimizer_ns IS NULL") > 0:
    fail("a steps row lacks its time split")
if one("SELECT count(*) FROM step_memory WHERE device = -1") != ran:
    fail("a step lacks its step_memory row")

first = db.execute("SELECT a.step, s.text, m.path FROM anomalies a LEFT JOIN spans sp ON sp.id = a.span_id "
                   "LEFT JOIN strings s ON s.id = sp.name_id LEFT JOIN modules m ON m.id = a.module_id "
                   "WHERE a.kind IN (0, 1, 7) ORDER BY a.t_ns, a.id LIMIT 1").fetchone()
if first != (fault, "div", "norm"):
    fail(f"the first non-finite finding is {first}, not (step {fault}, op div, module norm)")

windows = db.execute("SELECT first_step, last_step, reason FROM detail_windows ORDER BY first_step").fetchall()
# the flight recorder's window: the steps up to the fault (or up to the periodic window the fault fell in)
if not any(w[2] == 3 and w[0] <= fault - 8 and w[1] >= fault - 1 for w in windows):
    fail(f"no anomaly window holding the steps before {fault}: {windows}")
for a, b in zip(windows, windows[1:]):
    if b[0] <= a[1]:
        fail(f"windows overlap: {a} and {b}")


def detail_of(step):
    return (one("SELECT count(*) FROM spans WHERE step = ? AND kind = 0", step),
            one("SELECT count(*) FROM spans s JOIN op_details d ON d.span_id = s.id WHERE s.step = ?", step),
            one("SELECT count(*) FROM spans WHERE step = ? AND kind = 1", step))


for step in range(fault - 8, fault + 1):  # the steps just before the fault: full op-level detail
    ops, details, nodes = detail_of(step)
    if ops < 10 or details < 5 or nodes < 5:
        fail(f"step {step} (before the fault) has {ops} op spans, {details} op_details, {nodes} backward nodes")
covered = lambda s: any(a <= s <= b for a, b, _ in windows)
outside = [s for (s,) in db.execute("SELECT DISTINCT step FROM spans WHERE step IS NOT NULL AND kind != 6")
           if not covered(s)]
if outside:
    fail(f"spans of steps outside every detail window: {outside[:5]}")

# memory: replayed in time order, every free finds its block (each window starts with what was live)
live, bad = {}, 0
for action, device, addr in db.execute("SELECT action, device, addr FROM memory_events ORDER BY t_ns, id"):
    if action == 7:
        live = {k: v for k, v in live.items() if k[0] != device}
    elif action in (0, 8):
        live[(device, addr)] = True
    elif action == 1:
        bad += live.pop((device, addr), None) is None
if bad:
    fail(f"{bad} memory frees with no live block")

size = os.path.getsize(path)
first_steps = min(500, ran)
first_bytes = 8 * 1024 * first_steps  # the first steps in full: ~6 KB each for this MLP
per_step = (size - first_bytes) / max(1, ran - first_steps)
print(f"{ran} steps, {len(windows)} detail windows, first non-finite at step {fault} (div in norm), "
      f"{size / 1e6:.1f} MB: {per_step:.0f} B per step after the first {first_steps}")
if per_step > 1024:
    fail(f"the trace grows {per_step:.0f} B per step after the first steps (target <= 1 KB)")
