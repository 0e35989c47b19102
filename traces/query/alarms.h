// traces/query/alarms.h — the anomalies of a run as its story tells them: the first non-finite value with the place it was
// found (its op with input shapes and dtypes, module, backward node and that node's forward op), and the other
// anomalies grouped by kind (count, severities, first and last step, worst value, the params or modules concerned),
// and the chains of alarms the monitor linked (a root cause, then the alarms that followed from it, each link with its
// evidence: anomalies.cause_id and cause, schema version 6).
//
// The first non-finite value is the earliest anomaly (by t_ns, then id) of kind nonfinite_forward,
// nonfinite_backward or nonfinite_loss. alarm_groups() takes every anomaly but the one it is told to skip (that
// first one, told on its own); kinds whose worst severity is error come first, then warning, then info-only kinds;
// within a severity, by the time of their first anomaly. Anomalies are streamed (TraceDb::each), not collected.
//
//   gb::query::TraceDb db("run.db");
//   std::optional<gb::query::FirstNonFinite> f = gb::query::first_nonfinite(db);
//   for (const gb::query::AlarmGroup& g : gb::query::alarm_groups(db, f ? f->anomaly.id : gb::trace::OptId{})) ...
//
// Chains. A row whose cause_id names an anomaly of the trace with a smaller id is a consequence of that anomaly, its
// `cause` the evidence of the link (what connects the two: the layer order, the steps between). Every other row is
// a root: no cause_id (every row of a file older than version 6, read through the Reader's views), or a cause_id
// that names a missing row, the row itself or a later one (a damaged file; `glassbox check` reports it). Ids fall
// along every link, so following causes always ends at a root: no loop, whatever the file holds. A root with
// consequences starts a chain; a root without any is an unrelated alarm, told by kind as before.
//
//   std::vector<gb::query::AlarmChain> chains = gb::query::alarm_chains(db);
//   for (const gb::query::ChainLink& l : chains[0].links) ...  // the root, then each consequence depth first
//   gb::query::alarm_groups(db, skip, chains);                   // the alarms in no chain, by kind
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
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

// --- chains (see the top of this file)

// What chain_order needs of each row: its id and cause_id.
struct ChainKey {
  gb::trace::Id id = 0;
  gb::trace::OptId cause_id;
};
// One row in the order chains read.
struct ChainRow {
  std::size_t row = 0;               // index into the rows given to chain_order
  int depth = 0;                     // 0: a root; n: n links below its root
  std::optional<std::size_t> cause;  // the row of its cause (a valid cause_id); none for a root
  std::size_t below = 0;             // the rows right after this one that descend from it (all depths)
};
// Every row once: each root where it stands in `rows` (the caller's order, by time), right after it its consequences
// depth first (the consequences of one link in the order of `rows`). Rows in no chain keep their order and get
// depth 0, below 0. O(rows); no recursion (a chain may be as long as the file).
std::vector<ChainRow> chain_order(std::span<const ChainKey> rows);

struct ChainLink {
  gb::trace::AnomalyRecord anomaly;  // anomaly.cause: the evidence linking it to the link above (the root: "")
  std::string place;                 // as AlarmGroup::where names it (param, else module, else "op <name>"); "" none
  int depth = 0;                     // 0: the root cause
  std::size_t cause = 0;             // index into AlarmChain::links of its cause (the root: 0)
};
struct AlarmChain {
  std::vector<ChainLink> links;                              // the root first, then chain_order's order
  gb::trace::Severity severity = gb::trace::Severity::info;  // the worst of its links (clamped to info..error)
};
// The chains of the trace: every root with at least one consequence, by the root's t_ns then id. A trace without
// causes (older than version 6, or nothing linked) has none, at the cost of one query.
std::vector<AlarmChain> alarm_chains(const TraceDb& db);

// The groups by kind of every anomaly but `skip` and those in `leave_out` (the chains, told on their own).
std::vector<AlarmGroup> alarm_groups(const TraceDb& db, gb::trace::OptId skip = {},
                                     std::span<const AlarmChain> leave_out = {});

// True for the kinds whose value is worse the smaller it is (vanishing_norm).
bool lower_is_worse(gb::trace::AnomalyKind kind);

// "encoder.norm", "(root)" for the root module, "" when id is empty or unknown.
std::string module_path(const TraceDb& db, gb::trace::OptId module_id);

}  // namespace gb::query
