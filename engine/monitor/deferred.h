// engine/monitor/deferred.h — internal: the monitor's scans of tensors on cuda, whose results are read back once
// per step instead of once per op.
//
// A scan of a cuda tensor is a kernel (cuda/scan.cu) that adds its counts and sums into a slot of a small device
// buffer, in stream order after the op that made the tensor; nothing waits. The detectors keep what they would have
// judged at once (forward.cpp's ForwardEvent, backward.cpp's node events, grad_stats' rows) with the scans' tickets,
// and judge it all, in the order it happened, when the step ends: one wait for the device and one copy of the slots
// per step (deferred_result() of the first ticket not yet read). Raise mode reads back at each finding it needs, as
// PyTorch's anomaly mode waits at each check.
//
// The deferred path runs on the cpu too under GLASSBOX_MONITOR_DEFER=1 (read at each session start): cpu tensors are
// then judged through the same events, their scans made at once. That is how the tests check, where no GPU is, that
// a deferred run reports exactly what the immediate one does.
#pragma once

#include <cstdint>
#include <vector>

#include "glassbox/core/tensor.h"
#include "monitor/scan.h"

namespace gb::monitor::detail {

// Whether the detectors judge t through deferred events: a floating tensor with elements on cuda, or on the cpu
// under GLASSBOX_MONITOR_DEFER=1.
bool deferrable(const Tensor& t);
// A scan of t as it is now; its ticket. cuda: enqueued on the device's current stream (a non-contiguous t through a
// contiguous copy); cpu: scanned at once. -1 (always finite) for what is not scanned (integers, meta, empty).
int64_t defer_scan(const Tensor& t);
// defer_scan of each tensor (an undefined one: -1), the cuda ones of a device in launches of up to 32 tensors.
std::vector<int64_t> defer_scans(const std::vector<Tensor>& ts);
// The scan of a ticket. The first call for a ticket still on a device waits for every device with pending scans and
// reads them all back. ScanResult::first is element 0 of a cuda tensor, the value of a one-element cpu tensor.
ScanResult deferred_result(int64_t ticket);
// Forget every ticket (their events were judged). Also at each session start. Tickets are never reused: a
// forgotten one reads as not scanned, and deferred_forgotten() says so.
void deferred_reset();
bool deferred_forgotten(int64_t ticket);
// The session's GLASSBOX_MONITOR_DEFER setting (run.cpp reads it at session start).
void set_defer_cpu(bool on);

}  // namespace gb::monitor::detail
