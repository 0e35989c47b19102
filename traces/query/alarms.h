// traces/query/alarms.h — the anomalies of a run as its story tells them: the first non-finite value with the place it was
// found (its op with input shapes and dtypes, module, backward node and that node's forward op), and the other
// anomalies grouped by kind (count, severities, first and last step, worst value, the params or modules concerned).
//
// The first non-finite value is the earliest anomaly (by t_ns, then id) of kind nonfinite_forward,
// nonfinite_backward or nonfinite_loss. alarm_groups() takes every anomaly but the one it is told to skip (that
// first one, told on its own); kinds whose worst severity is error come first, then warning, then info-only kinds;
// within a severity, by the time of their first anomaly. Anomalies are streamed (TraceDb::each), not collected.
//
//   gb::query::TraceDb db("run.db");
//   std::optional<gb::query::FirstNonFinite> f = gb::query::first_nonfinite(db);
//   for (const gb::query::AlarmGroup& g : gb::query::alarm_groups(db, f ? f->anomaly.id : gb::trace::OptId{})) ...
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "traces/query/trace_db.h"
#include "traces/records.h"

namespace gb::query {

// An op span (or any span) with its op_details, when the trace has them.
struct SpanInfo {
  gb::trace::Id id = 0;
  gb::trace::SpanKind kind = gb::trace::SpanKind::op;
  std::string name;
  gb::trace::OptId step, module_id;
  std::string input_shapes, dtypes;  // op_details (strings), "" when absent
  std::optional<int> device;         // op_details.device
};
std::optional<SpanInfo> span_info(const TraceDb& db, gb::trace::Id span_id);

struct FirstNonFinite {
  gb::trace::AnomalyRecord anomaly;
  gb::trace::OptId step;               // the anomaly's step, else its span's or node's
  std::optional<SpanInfo> op;          // the span span_id names (forward: the op whose output held NaN/Inf)
  std::string node;                    // backward: graph_nodes name via node_id ("" when the graph was not stored)
  std::optional<SpanInfo> forward_op;  // backward: the op that created that node (graph_nodes.forward_span_id)
  std::string module;                  // module path (anomaly, else op, node, forward op); "(root)"; "" when unknown
  std::int64_t later = 0;              // other non-finite anomalies after this one
};
std::optional<FirstNonFinite> first_nonfinite(const TraceDb& db);

struct AlarmGroup {
  gb::trace::AnomalyKind kind = gb::trace::AnomalyKind::nonfinite_forward;
  std::int64_t count = 0;
  std::array<std::int64_t, 3> by_severity{};  // info, warning, error (an unknown severity counts as error)
  gb::trace::Severity severity = gb::trace::Severity::info;  // the worst one
  gb::trace::OptId first_step, last_step;                    // smallest and largest step named
  std::optional<double> worst;                               // the smallest value for vanishing_norm, else the largest
  std::vector<std::string> where;  // params ("fc1.weight"), else modules ("encoder.norm"), else ops ("op relu"),
                                   // in order of first appearance, at most kAlarmPlaces
  std::int64_t more_places = 0;    // distinct places beyond those
  std::string first_message;
  std::int64_t first_t_ns = 0;
};
constexpr std::size_t kAlarmPlaces = 5;
std::vector<AlarmGroup> alarm_groups(const TraceDb& db, gb::trace::OptId skip = {});

// True for the kinds whose value is worse the smaller it is (vanishing_norm).
bool lower_is_worse(gb::trace::AnomalyKind kind);

// "encoder.norm", "(root)" for the root module, "" when id is empty or unknown.
std::string module_path(const TraceDb& db, gb::trace::OptId module_id);

}  // namespace gb::query
