// engine/monitor/run.cpp — the monitor's settings (GLASSBOX_ANOMALY, GLASSBOX_ANOMALY_CONF, ...), the state of the
// traced run and its reset at each session start, rolling windows, and queuing anomaly rows.
#include "monitor/run.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "core/op_scope.h"
#include "monitor/deferred.h"
#include "monitor/monitor.h"

namespace gb::monitor {

namespace detail {
std::atomic<int> g_mode{static_cast<int>(Mode::off)};
}

namespace {

std::mutex g_config_mu;
std::optional<Config> g_override;  // set_config()

struct Field {
  const char* name;
  int64_t Config::*i = nullptr;
  double Config::*d = nullptr;
};
const Field kFields[] = {
    {"grad_stats_every", &Config::grad_stats_every},
    {"graph_every", &Config::graph_every},
    {"graph_first_steps", &Config::graph_first_steps},
    {"window", &Config::window},
    {"warmup", &Config::warmup},
    {"explode_factor", nullptr, &Config::explode_factor},
    {"record_factor", nullptr, &Config::record_factor},
    {"vanish_factor", nullptr, &Config::vanish_factor},
    {"spread_mads", nullptr, &Config::spread_mads},
    {"sustained_factor", nullptr, &Config::sustained_factor},
    {"sustained_steps", &Config::sustained_steps},
    {"update_ratio_max", nullptr, &Config::update_ratio_max},
    {"update_ratio_steps", &Config::update_ratio_steps},
    {"update_ratio_once", nullptr, &Config::update_ratio_once},
    {"depth_factor", nullptr, &Config::depth_factor},
    {"converged_loss_frac", nullptr, &Config::converged_loss_frac},
    {"no_gradient_steps", &Config::no_gradient_steps},
    {"dead_relu_zero_frac", nullptr, &Config::dead_relu_zero_frac},
    {"dead_relu_steps", &Config::dead_relu_steps},
    {"loss_spike_factor", nullptr, &Config::loss_spike_factor},
    {"loss_spike_mads", nullptr, &Config::loss_spike_mads},
    {"loss_spike_start_frac", nullptr, &Config::loss_spike_start_frac},
    {"memory_growth_steps", &Config::memory_growth_steps},
    {"memory_growth_min_bytes", &Config::memory_growth_min_bytes},
    {"amp_skip_streak", &Config::amp_skip_streak},
    {"amp_min_scale", nullptr, &Config::amp_min_scale},
    {"max_per_kind", &Config::max_per_kind},
};

std::string valid_keys() {
  std::string s = "mode";
  for (const Field& f : kFields) s += std::string(", ") + f.name;
  return s;
}

Mode parse_mode(std::string_view v, const char* where) {
  if (v == "off" || v == "0") return Mode::off;
  if (v == "record" || v == "on" || v == "1" || v.empty()) return Mode::record;
  if (v == "raise") return Mode::raise;
  throw Error(std::string(where) + ": unknown mode '" + std::string(v) + "'; use off, record or raise");
}

}  // namespace

Config parse_config(std::string_view text, Config c) {
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string_view item = text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    pos = comma == std::string_view::npos ? text.size() + 1 : comma + 1;
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      throw Error("GLASSBOX_ANOMALY_CONF: '" + std::string(item) + "' is not key=value; valid keys: " + valid_keys());
    std::string key(item.substr(0, eq)), value(item.substr(eq + 1));
    if (key == "mode") {
      c.mode = parse_mode(value, "GLASSBOX_ANOMALY_CONF");
      continue;
    }
    const Field* f = nullptr;
    for (const Field& k : kFields)
      if (key == k.name) f = &k;
    if (!f) throw Error("GLASSBOX_ANOMALY_CONF: unknown key '" + key + "'; valid keys: " + valid_keys());
    char* end = nullptr;
    double v = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0' || !std::isfinite(v) || v < 0)
      throw Error("GLASSBOX_ANOMALY_CONF: " + key + "=" + value + " is not a non-negative number");
    if (f->i) {
      if (v != std::floor(v)) throw Error("GLASSBOX_ANOMALY_CONF: " + key + "=" + value + " must be a whole number");
      if (v >= 9.2e18) throw Error("GLASSBOX_ANOMALY_CONF: " + key + "=" + value + " is too large");
      c.*(f->i) = static_cast<int64_t>(v);
    } else {
      c.*(f->d) = v;
    }
  }
  return c;
}

Config config() {
  std::lock_guard lock(g_config_mu);
  if (g_override) return *g_override;
  return detail::session_config();
}

void set_config(const Config& c) {
  {
    std::lock_guard lock(g_config_mu);
    g_override = c;
  }
  detail::Run& r = detail::run();
  std::lock_guard lock(r.mu);
  r.cfg = c;
  if (trace::enabled()) detail::g_mode.store(static_cast<int>(c.mode), std::memory_order_relaxed);
}

namespace detail {

Config session_config() {
  Config c;
  auto env_int = [](const char* name, int64_t& out) {
    if (const char* v = std::getenv(name); v && *v) {
      char* end = nullptr;
      long long n = std::strtoll(v, &end, 10);
      if (*end != '\0' || n < 0)
        throw Error(std::string(name) + "=" + v + " is not a non-negative whole number (e.g. " + name + "=10)");
      out = n;
    }
  };
  if (const char* v = std::getenv("GLASSBOX_ANOMALY")) c.mode = parse_mode(v, "GLASSBOX_ANOMALY");
  env_int("GLASSBOX_GRAD_STATS_EVERY", c.grad_stats_every);
  env_int("GLASSBOX_GRAPH_EVERY", c.graph_every);
  if (const char* v = std::getenv("GLASSBOX_ANOMALY_CONF")) c = parse_config(v, c);
  return c;
}

Run& run() {
  static Run* r = new Run;  // never destroyed: a session may stop during static destruction
  return *r;
}

namespace {

void on_session_start() {
  Config c;
  try {
    c = config();
  } catch (const std::exception& e) {  // a bad setting must not stop the run: say so, and monitor with defaults
    std::fprintf(stderr, "glassbox: warning: %s; the monitor runs with its defaults\n", e.what());
  }
  const char* defer = std::getenv("GLASSBOX_MONITOR_DEFER");
  set_defer_cpu(defer && std::string(defer) == "1");
  deferred_reset();
  Run& r = run();
  std::lock_guard lock(r.mu);
  static_cast<RunState&>(r) = RunState{};
  r.cfg = c;
  reset_step_memory();
  r.losses.set_capacity(static_cast<size_t>(std::max<int64_t>(c.window, 3)));
  g_mode.store(static_cast<int>(c.mode), std::memory_order_relaxed);
  connect_engine(true);  // whatever the mode: set_config may turn it on during the session
}

void on_session_stop() {
  try {
    judge_pending();  // device checks of a step that never ended
  } catch (const std::exception& e) {
    std::fprintf(stderr, "glassbox: warning: the training monitor's last checks failed at the session's end: %s\n",
                 e.what());
  }
  Run& r = run();
  std::lock_guard lock(r.mu);
  if (r.graph.forced) emit_graph_locked(current_step());  // an anomaly names nodes of a step that never ended
  if (r.auto_started) trace::set_step(-1);                // the automatic step numbers belong to this session
  g_mode.store(static_cast<int>(Mode::off), std::memory_order_relaxed);
  connect_engine(false);
}

const bool g_connected = [] {
  trace::add_session_hook(on_session_start, on_session_stop);
  return true;
}();

}  // namespace

// Nothing in core or autograd names the monitor (they notify observers, core/observer.h), so a program that never
// calls the monitor itself would not pull this object out of the static library, and its session hook above would
// never be registered: engine/CMakeLists.txt asks the linker for this symbol (--undefined) in every program that
// links glassbox::engine.
extern "C" const bool glassbox_monitor_link_anchor = g_connected;

void Window::push(double v) {
  if (!std::isfinite(v) || cap_ == 0) return;
  if (values_.size() < cap_) {
    values_.push_back(v);
  } else {
    const double old = values_[next_];
    values_[next_] = v;
    next_ = (next_ + 1) % cap_;
    sorted_.erase(std::lower_bound(sorted_.begin(), sorted_.end(), old));
  }
  sorted_.insert(std::upper_bound(sorted_.begin(), sorted_.end(), v), v);
}

double Window::median() const {
  const size_t n = sorted_.size();
  if (n == 0) return std::nan("");
  return n % 2 ? sorted_[n / 2] : 0.5 * (sorted_[n / 2 - 1] + sorted_[n / 2]);
}

double Window::mad() const {
  const size_t n = sorted_.size();
  if (n == 0) return std::nan("");
  // The deviations |x - m| in ascending order are a merge of two ascending runs: m - x walking left from the
  // median, x - m walking right. The k-th smallest of them is the median (and, for even n, the one before it).
  const double m = median();
  const auto split = std::lower_bound(sorted_.begin(), sorted_.end(), m) - sorted_.begin();
  std::ptrdiff_t left = split - 1, right = split;
  const size_t want = n / 2;  // index of the (upper) median deviation
  double prev = 0, cur = 0;
  for (size_t k = 0; k <= want; ++k) {
    prev = cur;
    const bool take_left =
        right >= static_cast<std::ptrdiff_t>(n) ||
        (left >= 0 && m - sorted_[static_cast<size_t>(left)] <= sorted_[static_cast<size_t>(right)] - m);
    cur = take_left ? m - sorted_[static_cast<size_t>(left--)] : sorted_[static_cast<size_t>(right++)] - m;
  }
  return 1.4826 * (n % 2 ? cur : 0.5 * (prev + cur));
}

int64_t current_step() { return trace::current_step(); }

bool grad_stats_due(const Run& r, int64_t step, const trace::DetailPolicy& detail) {
  const int64_t every = r.cfg.grad_stats_every;
  if (every <= 0 || step < 0) return false;
  return step % every == 0 || detail.due(step) || r.anomaly_step == step;
}

trace::Id report(trace::AnomalyRecord r, const AlarmFacts& facts) {
  Run& run_ = run();
  auto k = static_cast<size_t>(r.kind);
  if (k >= run_.counts.size() || run_.counts[k] >= run_.cfg.max_per_kind) return 0;
  ++run_.counts[k];
  if (!r.step && current_step() >= 0) r.step = current_step();
  if (run_.anomalies++ == 0) run_.graph.forced = true;  // the step where the first anomaly fires keeps its graph
  if (r.step) run_.anomaly_step = std::max(run_.anomaly_step, *r.step);  // its grad_stats rows are written
  r.id = run_.next_anomaly_id++;  // the monitor numbers the rows: a later row names an earlier one as its cause
  link_cause(run_, r, facts);
  Alarm a;
  a.id = r.id;
  a.kind = r.kind;
  a.step = r.step.value_or(-1);
  a.module = r.module_id.value_or(-1);
  a.position = facts.position;
  a.once = facts.once;
  a.group = facts.group;
  a.what = facts.what.empty() ? std::string(trace::kAnomalyKindNames[k]) : facts.what;
  run_.alarms.push_back(std::move(a));
  trace::emit(r);
  return r.id;
}

trace::AnomalyRecord param_anomaly(trace::AnomalyKind kind, const ParamState& st, double value, std::string message) {
  trace::AnomalyRecord a;
  a.kind = kind;
  a.severity = trace::Severity::warning;
  a.param_id = st.param_id;
  if (st.module_id > 0) a.module_id = st.module_id;
  a.value = value;
  a.message = std::move(message);
  return a;
}

void report_nonfinite(trace::AnomalyRecord r) {
  std::string message = r.message;
  bool raise = false;
  {
    Run& run_ = run();
    std::lock_guard lock(run_.mu);
    raise = run_.cfg.mode == Mode::raise && r.severity == trace::Severity::error;
    report(std::move(r));
  }
  if (raise) throw AnomalyError(message + " (GLASSBOX_ANOMALY=raise)");
}

std::string shape_text(const Tensor& t) {
  std::ostringstream o;
  o << t.sizes() << " " << gb::detail::dtype_name(t.scalar_type());
  return o.str();
}

std::string number_text(double v, int digits) {
  char b[32];
  std::snprintf(b, sizeof b, "%.*g", digits, v);
  return b;
}

std::string count_text(int64_t nan, int64_t inf) {
  if (nan && inf) return std::to_string(nan) + " NaN and " + std::to_string(inf) + " Inf";
  if (nan) return std::to_string(nan) + " NaN";
  return std::to_string(inf) + " Inf";
}

}  // namespace detail
}  // namespace gb::monitor
