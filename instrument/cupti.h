// instrument/cupti.h — GPU activity from CUPTI into the trace (internal to the instrument library).
//
// While a session records, in a build with the CUDA toolkit (GLASSBOX_WITH_CUPTI), CUPTI's activity API collects
// CONCURRENT_KERNEL (never the serializing KERNEL kind), MEMCPY, MEMSET, RUNTIME, DRIVER, SYNCHRONIZATION and
// EXTERNAL_CORRELATION records:
//   - timestamps come from the trace's own clock (cuptiActivityRegisterTimestampCallback: CUPTI maps the GPU's
//     timestamps onto it), so kernels and ops share one time axis; the callback's clock runs on, never back, from
//     one session to the next in a process (CUPTI interpolates GPU times between its readings of it), each session
//     mapping it onto its own clock;
//   - API records carry the system thread id (cuptiSetThreadIdType(SYSTEM): gettid, as the trace's threads), so
//     they sit on the calling thread's "CUDA API: <thread name>" track;
//   - every recorded span pushes its id as CUPTI's external correlation id (probe.h kGpuSpans) while it is open,
//     so a kernel names the span that launched it (kernels.launch_span_id);
//   - full buffers (8 MiB each) go to a background thread that decodes them (decode_activity) and hands the rows to
//     a GpuActivityWriter; the session's end synchronizes nothing itself (the engine's session hook synchronizes
//     its devices first), forces a flush, disables, flushes again, detaches the collection from CUPTI's callbacks
//     (a callback still running on CUPTI's worker thread is waited for; a later one frees its buffer, so none
//     touches freed state), drains the queue and writes meta: cupti ("on", or "off: <why>"),
//     cupti_dropped_records (records CUPTI could not store: never silent), cupti_kernels, cupti_unlinked_kernels.
//   - Runtime calls that only ask a question (cudaGetDevice, cudaGetLastError, ...) are not written as spans;
//     driver calls are written only for launches (cuLaunchKernel...): the rest only feed the correlation joins.
// GLASSBOX_CUPTI=0 in the environment (or SessionOptions::gpu_activity = false) leaves CUPTI off. Without a CUDA
// driver CUPTI refuses to enable and the trace says why in meta cupti.
#pragma once

#include <cstdint>
#include <string>

#include "instrument/clock.h"
#include "instrument/gpu_activity.h"

namespace gb::trace::detail {

// Starts collecting for the session that has just started recording (its clock). Returns "on" or "off: <why>",
// which also goes to meta cupti.
std::string start_gpu_activity(const TickClock& clock, bool wanted);
// Flushes CUPTI, waits for every buffer to be written and turns collection off (meta counts). No-op when off.
void stop_gpu_activity();

// What one CUPTI activity record is: a GPU activity for the writer, an external correlation, or nothing we keep.
// `record` points at a CUpti_Activity (any kind); `offset` maps its timestamps to the trace clock (ns = ts - offset).
// Exposed for tests, which build records by hand; built only with CUPTI (elsewhere it returns skip).
enum class Decoded { activity, correlation, skip };
Decoded decode_activity(const void* record, std::int64_t offset, GpuActivity& activity, std::int64_t& correlation,
                        Id& span);

}  // namespace gb::trace::detail
