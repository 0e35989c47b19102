// traces/query/alarms.cpp — the first non-finite value and its place (spans, op_details, graph_nodes, modules), the
// anomalies grouped by kind in one streamed pass, and the chains that anomalies.cause_id links.
#include "traces/query/alarms.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace gb::query {

using gb::trace::AnomalyKind;
using gb::trace::AnomalyRecord;
using gb::trace::Id;
using gb::trace::OptId;
using gb::trace::Severity;

namespace {

constexpr const char* kAnomalyColumns =
    "SELECT id, t_ns, step, kind, severity, span_id, node_id, module_id, param_id, value, message, rank, cause_id, "
    "cause FROM anomalies ";

AnomalyRecord read_anomaly(const Row& r) {
  AnomalyRecord a;
  a.id = r.i64(0);
  a.t_ns = r.i64(1);
  a.step = r.opt_i64(2);
  a.kind = static_cast<AnomalyKind>(r.i64(3));
  a.severity = static_cast<Severity>(r.i64(4));
  a.span_id = r.opt_i64(5);
  a.node_id = r.opt_i64(6);
  a.module_id = r.opt_i64(7);
  a.param_id = r.opt_i64(8);
  a.value = r.opt_f64(9);
  a.message = std::string(r.text(10));
  a.rank = r.opt_i64(11);
  a.cause_id = r.opt_i64(12);
  a.cause = std::string(r.text(13));
  return a;
}

std::string path_text(std::string_view path) { return path.empty() ? "(root)" : std::string(path); }

// Module paths and "module.param" names of the whole trace (both tables are small).
struct Names {
  std::unordered_map<Id, std::string> modules, params;
  explicit Names(const TraceDb& db) {
    db.each("SELECT id, path FROM modules", [&](const Row& r) { modules[r.i64(0)] = path_text(r.text(1)); });
    db.each("SELECT p.id, m.path, p.name FROM params p LEFT JOIN modules m ON m.id = p.module_id", [&](const Row& r) {
      std::string_view path = r.text(1);
      params[r.i64(0)] = path.empty() ? std::string(r.text(2)) : std::string(path) + "." + std::string(r.text(2));
    });
  }
};

// Where an anomaly was found, as the story names it: its param, else its module, else its op ("op relu").
struct Places {
  Names names;
  std::unordered_map<Id, std::string> span_names;
  explicit Places(const TraceDb& db) : names(db) {}
  std::string of(const TraceDb& db, const AnomalyRecord& a) {
    if (a.param_id) {
      auto p = names.params.find(*a.param_id);
      return p != names.params.end() ? p->second : "param " + std::to_string(*a.param_id);
    }
    if (a.module_id) {
      auto m = names.modules.find(*a.module_id);
      return m != names.modules.end() ? m->second : "module " + std::to_string(*a.module_id);
    }
    if (!a.span_id) return "";
    auto s = span_names.find(*a.span_id);
    if (s == span_names.end()) {
      std::optional<SpanInfo> info = span_info(db, *a.span_id);
      s = span_names.emplace(*a.span_id, info ? "op " + info->name : "span " + std::to_string(*a.span_id)).first;
    }
    return s->second;
  }
};

Severity clamp_severity(Severity s) { return static_cast<Severity>(std::clamp(static_cast<int>(s), 0, 2)); }

}  // namespace

bool lower_is_worse(AnomalyKind kind) { return kind == AnomalyKind::vanishing_norm; }

std::string module_path(const TraceDb& db, OptId module_id) {
  std::string path;
  if (!module_id) return path;
  db.each("SELECT path FROM modules WHERE id = ?1", {*module_id}, [&](const Row& r) { path = path_text(r.text(0)); });
  return path;
}

std::optional<SpanInfo> span_info(const TraceDb& db, Id span_id) {
  std::optional<SpanInfo> info;
  db.each(R"sql(
    SELECT s.kind, n.text, s.step, s.module_id, sh.text, dt.text, d.device
    FROM spans s LEFT JOIN strings n ON n.id = s.name_id LEFT JOIN op_details d ON d.span_id = s.id
      LEFT JOIN strings sh ON sh.id = d.input_shapes LEFT JOIN strings dt ON dt.id = d.dtypes
    WHERE s.id = ?1)sql",
          {span_id}, [&](const Row& r) {
            info = SpanInfo{span_id,
                            static_cast<gb::trace::SpanKind>(r.i64(0)),
                            std::string(r.text(1)),
                            r.opt_i64(2),
                            r.opt_i64(3),
                            std::string(r.text(4)),
                            std::string(r.text(5)),
                            r.is_null(6) ? std::nullopt : std::optional<int>(static_cast<int>(r.i64(6)))};
          });
  return info;
}

std::optional<FirstNonFinite> first_nonfinite(const TraceDb& db) {
  std::optional<FirstNonFinite> f;
  const std::initializer_list<std::int64_t> kinds = {static_cast<std::int64_t>(AnomalyKind::nonfinite_forward),
                                                     static_cast<std::int64_t>(AnomalyKind::nonfinite_backward),
                                                     static_cast<std::int64_t>(AnomalyKind::nonfinite_loss)};
  db.each(std::string(kAnomalyColumns) + "WHERE kind IN (?1, ?2, ?3) ORDER BY t_ns, id LIMIT 1", kinds,
          [&](const Row& r) {
            f.emplace();
            f->anomaly = read_anomaly(r);
          });
  if (!f) return f;
  const AnomalyRecord& a = f->anomaly;
  f->later = db.scalar("SELECT count(*) FROM anomalies WHERE kind IN (?1, ?2, ?3)", kinds) - 1;
  f->step = a.step;
  if (a.span_id) f->op = span_info(db, *a.span_id);
  OptId node_module, node_step;
  if (a.node_id) {
    OptId forward;
    db.each(
        "SELECT s.text, n.forward_span_id, n.module_id, n.step FROM graph_nodes n LEFT JOIN strings s ON s.id = "
        "n.name_id WHERE n.id = ?1",
        {*a.node_id}, [&](const Row& r) {
          f->node = std::string(r.text(0));
          forward = r.opt_i64(1);
          node_module = r.opt_i64(2);
          node_step = r.opt_i64(3);
        });
    if (forward) f->forward_op = span_info(db, *forward);
  }
  // A backward finding without its graph may name the backward_node span instead of a node.
  if (f->node.empty() && f->op && f->op->kind == gb::trace::SpanKind::backward_node) f->node = f->op->name;
  if (!f->step) f->step = f->op ? f->op->step : OptId{};
  if (!f->step) f->step = node_step;
  for (OptId m : {a.module_id, f->op ? f->op->module_id : OptId{}, node_module,
                  f->forward_op ? f->forward_op->module_id : OptId{}}) {
    if (!f->module.empty()) break;
    f->module = module_path(db, m);
  }
  return f;
}

std::vector<AlarmGroup> alarm_groups(const TraceDb& db, OptId skip, std::span<const AlarmChain> leave_out) {
  Places where(db);
  std::unordered_set<Id> chained;
  for (const AlarmChain& c : leave_out)
    for (const ChainLink& l : c.links) chained.insert(l.anomaly.id);
  std::map<int, AlarmGroup> groups;             // by kind
  std::map<int, std::set<std::string>> places;  // by kind: every distinct place
  db.each(std::string(kAnomalyColumns) + "ORDER BY t_ns, id", [&](const Row& r) {
    AnomalyRecord a = read_anomaly(r);
    if ((skip && a.id == *skip) || chained.contains(a.id)) return;
    const int k = static_cast<int>(a.kind);
    auto [it, fresh] = groups.try_emplace(k);
    AlarmGroup& g = it->second;
    if (fresh) {
      g.kind = a.kind;
      g.first_message = a.message;
      g.first_t_ns = a.t_ns;
    }
    ++g.count;
    const int sev = std::clamp(static_cast<int>(a.severity), 0, 2);
    ++g.by_severity[static_cast<std::size_t>(sev)];
    g.severity = std::max(g.severity, static_cast<Severity>(sev));
    if (a.step) {
      g.first_step = g.first_step ? std::min(*g.first_step, *a.step) : *a.step;
      g.last_step = g.last_step ? std::max(*g.last_step, *a.step) : *a.step;
    }
    if (a.value && !std::isnan(*a.value)) {
      const bool better = g.worst && (lower_is_worse(a.kind) ? *a.value >= *g.worst : *a.value <= *g.worst);
      if (!better) g.worst = a.value;
    }
    const std::string place = where.of(db, a);
    if (!place.empty() && places[k].insert(place).second) {
      if (g.where.size() < kAlarmPlaces)
        g.where.push_back(place);
      else
        ++g.more_places;
    }
  });
  std::vector<AlarmGroup> out;
  for (auto& [k, g] : groups) out.push_back(std::move(g));
  std::stable_sort(out.begin(), out.end(), [](const AlarmGroup& a, const AlarmGroup& b) {
    if (a.severity != b.severity) return a.severity > b.severity;
    return a.first_t_ns < b.first_t_ns;
  });
  return out;
}

std::vector<ChainRow> chain_order(std::span<const ChainKey> rows) {
  const std::size_t n = rows.size();
  std::unordered_map<Id, std::size_t> at;  // id -> its first row
  at.reserve(n);
  for (std::size_t i = 0; i < n; ++i) at.try_emplace(rows[i].id, i);
  // A cause counts when it is a row of `rows` with a smaller id: ids then fall along every link (no cycle).
  std::vector<std::optional<std::size_t>> cause(n);
  std::vector<std::size_t> first(n + 1, 0);  // the consequences of row i: kids[first[i] .. first[i + 1])
  for (std::size_t i = 0; i < n; ++i) {
    if (!rows[i].cause_id) continue;
    auto c = at.find(*rows[i].cause_id);
    if (c == at.end() || rows[c->second].id >= rows[i].id) continue;
    cause[i] = c->second;
    ++first[c->second + 1];
  }
  for (std::size_t i = 0; i < n; ++i) first[i + 1] += first[i];
  std::vector<std::size_t> kids(first[n]), fill(first.begin(), first.end() - 1);
  for (std::size_t i = 0; i < n; ++i)
    if (cause[i]) kids[fill[*cause[i]]++] = i;  // in the order of rows

  std::vector<ChainRow> out;
  out.reserve(n);
  struct Open {
    std::size_t at;    // its index in out
    std::size_t next;  // its next consequence to emit, into kids
  };
  std::vector<Open> stack;
  for (std::size_t root = 0; root < n; ++root) {
    if (cause[root]) continue;
    out.push_back(ChainRow{root, 0, std::nullopt, 0});
    stack.push_back(Open{out.size() - 1, first[root]});
    while (!stack.empty()) {
      Open& top = stack.back();
      const std::size_t row = out[top.at].row;
      if (top.next == first[row + 1]) {  // every consequence emitted: the rows below it are known
        out[top.at].below = out.size() - top.at - 1;
        stack.pop_back();
        continue;
      }
      const std::size_t kid = kids[top.next++];
      out.push_back(ChainRow{kid, out[top.at].depth + 1, row, 0});
      stack.push_back(Open{out.size() - 1, first[kid]});  // may move `top`: not used after this
    }
  }
  return out;
}

std::vector<AlarmChain> alarm_chains(const TraceDb& db) {
  std::vector<AlarmChain> chains;
  if (db.scalar("SELECT EXISTS (SELECT 1 FROM anomalies WHERE cause_id IS NOT NULL)") == 0) return chains;
  std::vector<AnomalyRecord> rows;
  db.each(std::string(kAnomalyColumns) + "ORDER BY t_ns, id", [&](const Row& r) { rows.push_back(read_anomaly(r)); });
  std::vector<ChainKey> keys;
  keys.reserve(rows.size());
  for (const AnomalyRecord& a : rows) keys.push_back(ChainKey{a.id, a.cause_id});
  Places where(db);
  const std::vector<ChainRow> order = chain_order(keys);
  std::vector<std::size_t> link_of(rows.size(), 0);  // row -> its index in its chain's links
  for (const ChainRow& c : order) {
    if (c.depth == 0 && c.below == 0) continue;  // an unrelated alarm
    if (c.depth == 0) chains.emplace_back();
    AlarmChain& chain = chains.back();
    AnomalyRecord& a = rows[c.row];
    link_of[c.row] = chain.links.size();
    chain.severity = std::max(chain.severity, clamp_severity(a.severity));
    const std::string place = where.of(db, a);
    chain.links.push_back(ChainLink{std::move(a), place, c.depth, c.cause ? link_of[*c.cause] : 0});
  }
  return chains;
}

}  // namespace gb::query
