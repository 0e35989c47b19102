// tools/merge.h — `glassbox merge run.rank0.db run.rank1.db ... -o run.db`: the traces of a data-parallel job's
// ranks as one trace on one clock (traces/SCHEMA.md, "Merged traces").
//
// Contract:
//   - Inputs: two or more traces of one job (schema version 4 or newer), each with meta `rank` (GLASSBOX_TRACE under
//     mpirun writes run.rank<r>.db with it), distinct ranks, the same `world_size`. Anything else is a gb::trace::Error
//     that names the file and what to do; ranks of the job that are not given are listed in notes.
//   - Clocks: rank r's times are mapped onto the lowest given rank's (the reference) by the clock_sync barriers
//     every traced rank runs at init_process_group and destroy_process_group: each barrier bounds the offset
//     (ref.start - r.end <= offset <= ref.end - r.start), and a handshake's bounds intersect to a narrow interval
//     whose middle is taken (half its width: the error, in aligned_by and meta clock_error_ns.rank<r>); empty bounds
//     fall back to the median of the end differences. Two handshakes give offset and rate (a rate beyond what a clock
//     can be falls back to the first), one gives the offset, none falls back to meta started_at_unix_ns (said in
//     ranks.aligned_by and notes). Every time is then shifted so that none is negative.
//   - The output holds every rank's timeline: threads (threads.rank set; ids moved past the previous rank's),
//     spans (ids moved with their thread), instants, op_details, kernels, collectives, strings (each text once),
//     anomalies (anomalies.rank set) and each rank's steps in rank_steps; one ranks row per rank. The reference
//     rank's steps, modules, params, grad_stats, graph, memory_events, oom_reports and counters (the per-process state
//     the memory, gradient and graph panels show; another rank's are in its own file); other ranks' module_id and
//     param_id name the reference's module or parameter of the same path. meta: the reference's keys, and every
//     rank's as rank<r>.<key>; merged_ranks, merged_from, clock_error_ns.rank<r>.
//   - Written to OUT.merging beside OUT and renamed over OUT when complete: a failure leaves OUT as it was. OUT must
//     not be one of the inputs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "traces/records.h"

namespace gb::tools {

struct MergeResult {
  std::vector<gb::trace::RankRecord> ranks;  // in rank order
  std::int64_t spans = 0;
  std::int64_t collectives = 0;
  std::vector<std::string> notes;  // what a person should know: missing ranks, a fallback alignment
};

MergeResult merge_traces(const std::vector<std::string>& inputs, const std::string& out);

}  // namespace gb::tools
