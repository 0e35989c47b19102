// traces/query/ranks.h — the ranks of a merged data-parallel trace compared (`glassbox merge`; `glassbox report`'s
// ranks section): each rank's step times, its time in collectives and how much of it was waiting for the others,
// its training thread's time blocked on communication, how much of its all-reduce time ran during backward, and
// the straggler the others waited for.
//
// Contract:
//   - compare_ranks() reads threads.rank, rank_steps, ranks and the collective spans (kind collective) of a trace
//     `glassbox merge` wrote; for any other trace it returns no ranks.
//   - Collectives are those on a communication thread inside a step; the clock handshake's own (clock_sync,
//     clock_sync_vote) are left out. They are matched across ranks by spans.seq (the group's collective number); a
//     rank's wait at a matched collective is the time from its start to the last rank's start (a rank cannot finish
//     before every rank arrived), at most its duration. The rank that arrived last caused the others' waits.
//   - The straggler is the rank the others kept waiting for: of at least kStragglerMinMatched matched collectives it
//     arrived last at >= kStragglerLastShare, and the median over all of them of the wait it caused (0 where it was
//     not last) is >= kStragglerWaitShare of the median step and >= kStragglerMinWaitNs. Medians: a few preemptions
//     on a busy machine make a few long waits, not a straggler; the floor: a rank that is tens of microseconds late
//     every time (MPI's and the scheduler's latency; steps of 200 us make that 15%) is not worth an alarm either.
//     Ranks that arrive last in turn, or waits that cost little, name none.
//   - Overlap: the part of each all_reduce span that lies inside a backward pass (backward_phase spans named
//     backward) of the same rank. Blocked: spans of kind collective on the rank's other threads (Work::wait that
//     had to wait).
//   - The program's own barriers (collectives named barrier) test the merge's clocks: a barrier releases every rank at
//     one moment, so on a right clock every rank's span of it holds that moment: barrier_gap_ns, the largest
//     max(start) - min(end) over them, is <= 0 (a misaligned rank shows as a gap). barrier_spread_ns is the largest
//     difference of their ends (small unless a rank's thread was preempted as the barrier returned). A gap within
//     clock_error_ns (+ 1 us) is consistent with the alignment the merge promised.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "traces/query/steps.h"
#include "traces/query/trace_db.h"

namespace gb::query {

inline constexpr double kStragglerLastShare = 2.0 / 3.0;
inline constexpr double kStragglerWaitShare = 0.10;
inline constexpr double kStragglerMinWaitNs = 250'000;
inline constexpr std::int64_t kStragglerMinMatched = 3;

struct RankRow {
  std::int64_t rank = 0;
  std::string host, aligned_by;
  Summary steps;                   // durations of its rank_steps, ns
  std::int64_t collectives = 0;    // on its communication thread, inside steps
  double collective_ns = 0;        // their total duration
  double waited_ns = 0;            // of it, waiting for the last rank to arrive (matched collectives)
  double blocked_ns = 0;           // its training threads blocked on a collective
  double allreduce_ns = 0;         // all_reduce time inside steps
  double overlap_ns = 0;           // of it, during a backward pass
  std::int64_t last_arrivals = 0;  // matched collectives it reached last
  double caused_ns = 0;            // the other ranks' waits at those
  std::vector<double> caused;      // per matched collective, the wait it caused (0 where it was not last)
};

struct RankComparison {
  std::vector<RankRow> ranks;  // in rank order; empty for a trace that is not merged
  std::int64_t matched = 0;    // collectives every rank ran
  std::optional<std::int64_t> straggler;
  double straggler_median_ns = 0;  // the median wait it caused per matched collective
  double straggler_share = 0;      // that / the median step of the other ranks
  std::int64_t barriers = 0;       // program barriers matched across ranks
  std::optional<double> barrier_spread_ns;
  std::optional<double> barrier_gap_ns;
  std::optional<double> clock_error_ns;  // the largest of the ranks' alignment bounds (meta clock_error_ns.rank<r>;
                                         // none when one is unknown)
};

RankComparison compare_ranks(const TraceDb& db);

}  // namespace gb::query
