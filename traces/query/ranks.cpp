// traces/query/ranks.cpp — a merged trace's ranks compared (contract in ranks.h).
#include "traces/query/ranks.h"

#include <algorithm>
#include <map>

#include "traces/records.h"

namespace gb::query {

namespace {

struct Interval {
  std::int64_t start = 0, end = 0;
};

// Total length of the parts of `a` inside the union of `b` (b sorted by start; its overlaps merged here).
double overlap(const std::vector<Interval>& a, std::vector<Interval> b) {
  std::vector<Interval> merged;
  for (const Interval& i : b) {
    if (!merged.empty() && i.start <= merged.back().end)
      merged.back().end = std::max(merged.back().end, i.end);
    else
      merged.push_back(i);
  }
  double total = 0;
  for (const Interval& x : a) {
    auto it = std::upper_bound(merged.begin(), merged.end(), x.start,
                               [](std::int64_t t, const Interval& m) { return t < m.end; });
    for (; it != merged.end() && it->start < x.end; ++it)
      total += double(std::min(x.end, it->end) - std::max(x.start, it->start));
  }
  return total;
}

}  // namespace

RankComparison compare_ranks(const TraceDb& db) {
  RankComparison out;
  std::map<std::int64_t, std::size_t> index;  // rank -> ranks[i]
  db.each("SELECT rank, host, aligned_by FROM ranks ORDER BY rank", [&](const Row& r) {
    index[r.i64(0)] = out.ranks.size();
    RankRow row;
    row.rank = r.i64(0);
    row.host = std::string(r.text(1));
    row.aligned_by = std::string(r.text(2));
    out.ranks.push_back(std::move(row));
  });
  if (out.ranks.empty()) return out;
  out.clock_error_ns = 0.0;  // the worst rank's bound; unknown when any aligned rank has none
  for (const RankRow& row : out.ranks) {
    if (row.aligned_by == "reference") continue;
    const std::optional<std::int64_t> e = db.meta_int("clock_error_ns.rank" + std::to_string(row.rank));
    if (!e) {
      out.clock_error_ns.reset();
      break;
    }
    out.clock_error_ns = std::max(*out.clock_error_ns, double(*e));
  }

  std::map<std::int64_t, std::vector<double>> steps;
  db.each("SELECT rank, end_ns - start_ns FROM rank_steps ORDER BY rank, step",
          [&](const Row& r) { steps[r.i64(0)].push_back(double(r.i64(1))); });
  for (RankRow& row : out.ranks) row.steps = summarize(steps[row.rank]);

  // The collectives of each rank's communication thread inside steps; program barriers whatever their step.
  struct Seen {
    std::int64_t start = 0, end = 0;
  };
  std::map<std::int64_t, std::map<std::int64_t, Seen>> by_seq, barriers;  // seq -> rank -> span
  std::map<std::int64_t, std::vector<Interval>> allreduce;
  const std::int64_t collective = static_cast<std::int64_t>(gb::trace::SpanKind::collective);
  const std::int64_t communication = static_cast<std::int64_t>(gb::trace::ThreadRole::communication);
  db.each(
      "SELECT t.rank, s.seq, s.start_ns, s.end_ns, n.text, s.step IS NOT NULL FROM spans s "
      "JOIN threads t ON t.id = s.thread_id JOIN strings n ON n.id = s.name_id "
      "WHERE s.kind = ?1 AND t.role = ?2 AND t.rank IS NOT NULL AND s.seq IS NOT NULL",
      {collective, communication}, [&](const Row& r) {
        auto it = index.find(r.i64(0));
        if (it == index.end()) return;
        const std::string_view name = r.text(4);
        const Seen seen{r.i64(2), r.i64(3)};
        if (name == "barrier") barriers[r.i64(1)][r.i64(0)] = seen;
        if (!r.i64(5) || name == "clock_sync" || name == "clock_sync_vote") return;
        RankRow& row = out.ranks[it->second];
        ++row.collectives;
        row.collective_ns += double(seen.end - seen.start);
        by_seq[r.i64(1)][r.i64(0)] = seen;
        if (name == "all_reduce") {
          row.allreduce_ns += double(seen.end - seen.start);
          allreduce[r.i64(0)].push_back({seen.start, seen.end});
        }
      });

  for (const auto& [seq, seen] : by_seq) {
    if (seen.size() != out.ranks.size()) continue;  // not every rank ran it inside a step
    ++out.matched;
    std::int64_t last_rank = seen.begin()->first, last_start = seen.begin()->second.start;
    for (const auto& [rank, s] : seen)
      if (s.start > last_start) last_rank = rank, last_start = s.start;
    double caused = 0;
    for (const auto& [rank, s] : seen) {
      const double w = double(std::min(last_start, s.end) - s.start);
      out.ranks[index[rank]].waited_ns += std::max(0.0, w);
      if (rank != last_rank) caused += std::max(0.0, w);
    }
    for (RankRow& row : out.ranks) row.caused.push_back(row.rank == last_rank ? caused : 0.0);
    RankRow& last = out.ranks[index[last_rank]];
    ++last.last_arrivals;
    last.caused_ns += caused;
  }

  for (const auto& [seq, seen] : barriers) {
    if (seen.size() != out.ranks.size()) continue;
    std::int64_t lo = seen.begin()->second.end, hi = lo, last_start = seen.begin()->second.start;
    for (const auto& [rank, s] : seen)
      lo = std::min(lo, s.end), hi = std::max(hi, s.end), last_start = std::max(last_start, s.start);
    out.barrier_spread_ns = std::max(out.barrier_spread_ns.value_or(0.0), double(hi - lo));
    const double gap = double(last_start - lo);
    out.barrier_gap_ns = out.barriers ? std::max(*out.barrier_gap_ns, gap) : gap;
    ++out.barriers;
  }

  // Overlap with backward, and the training threads' blocked time.
  std::map<std::int64_t, std::vector<Interval>> backward;
  db.each(
      "SELECT t.rank, s.start_ns, s.end_ns FROM spans s JOIN threads t ON t.id = s.thread_id "
      "JOIN strings n ON n.id = s.name_id WHERE s.kind = ?1 AND n.text = 'backward' AND t.rank IS NOT NULL "
      "ORDER BY s.start_ns",
      {static_cast<std::int64_t>(gb::trace::SpanKind::backward_phase)}, [&](const Row& r) {
        backward[r.i64(0)].push_back({r.i64(1), r.i64(2)});
      });
  db.each(
      "SELECT t.rank, sum(s.dur_ns) FROM spans s JOIN threads t ON t.id = s.thread_id "
      "WHERE s.kind = ?1 AND t.role != ?2 AND t.rank IS NOT NULL AND s.step IS NOT NULL GROUP BY t.rank",
      {collective, communication}, [&](const Row& r) {
        if (auto it = index.find(r.i64(0)); it != index.end()) out.ranks[it->second].blocked_ns = double(r.i64(1));
      });
  for (RankRow& row : out.ranks) row.overlap_ns = overlap(allreduce[row.rank], backward[row.rank]);

  // The straggler: last most of the time, and what it typically cost the others is a real share of a step.
  if (out.matched >= kStragglerMinMatched && out.ranks.size() >= 2) {
    const RankRow* worst = &out.ranks.front();
    for (const RankRow& row : out.ranks)
      if (row.last_arrivals > worst->last_arrivals) worst = &row;
    std::vector<double> others_steps;
    for (const RankRow& row : out.ranks)
      if (&row != worst) others_steps.push_back(row.steps.median);
    const double step = summarize(others_steps).median;
    const double typical = summarize(worst->caused).median;
    if (double(worst->last_arrivals) >= kStragglerLastShare * double(out.matched) && step > 0 &&
        typical >= kStragglerWaitShare * step && typical >= kStragglerMinWaitNs) {
      out.straggler = worst->rank;
      out.straggler_median_ns = typical;
      out.straggler_share = typical / step;
    }
  }
  return out;
}

}  // namespace gb::query
