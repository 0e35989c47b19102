// traces/query/dataloader.cpp — DataLoader stage totals, by span name.
#include "traces/query/dataloader.h"

#include <cmath>

#include "traces/query/steps.h"
#include "traces/records.h"

namespace gb::query {

DataLoaderSummary dataloader_summary(const TraceDb& db) {
  DataLoaderSummary d;
  db.each(
      "SELECT COALESCE(t.text, ''), COUNT(*), SUM(s.dur_ns), SUM(CASE WHEN s.step IS NULL THEN s.dur_ns ELSE 0 END) "
      "FROM spans s LEFT JOIN strings t ON t.id = s.name_id WHERE s.kind = ?1 GROUP BY s.name_id",
      {static_cast<std::int64_t>(gb::trace::SpanKind::dataloader)}, [&](const Row& r) {
        std::string_view name = r.text(0);
        d.spans += r.i64(1);
        std::int64_t ns = r.i64(2);
        if (name == "wait") {
          d.wait_outside_ns += r.i64(3);
          d.wait_ns += ns - r.i64(3);
        }
        else if (name == "sample")
          d.sample_ns += ns;
        else if (name == "fetch")
          d.fetch_ns += ns;
        else if (name == "collate")
          d.collate_ns += ns;
        else if (name == "pin")
          d.pin_ns += ns;
        else if (name == "transfer")
          d.transfer_ns += ns;
        else
          d.other_ns += ns;
      });
  if (d.spans > 0) d.step_total_ns = summarize(step_durations(db).durations_ns).total;
  return d;
}

std::string data_bound_verdict(const DataLoaderSummary& d) {
  const std::string pct = std::to_string(static_cast<int>(std::lround(100.0 * d.wait_share()))) + "%";
  if (d.wait_share() > k_data_bound_share)
    return "data-bound: the training loop waited " + pct +
           " of its step time for batches; more num_workers or a cheaper transform would help (the fetch and "
           "collate spans show where the time goes)";
  return "not data-bound: the training loop waited " + pct + " of its step time for batches";
}

}  // namespace gb::query
