// traces/query/run_summary.cpp — the whole run's summary: one pass over steps (sums and the order
// statistics), the loss tail by step range, one pass over step_memory, and the detail meta keys.
#include "traces/query/run_summary.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>

#include "traces/schema.h"

namespace gb::query {

namespace {

std::optional<std::int64_t> parse_int(std::string_view v) {
  std::int64_t n = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || end != v.data() + v.size() || v.empty()) return std::nullopt;
  return n;
}

// b - a (+ 1), saturated: a damaged file's extreme steps must not overflow.
std::int64_t sat_sub(std::int64_t b, std::int64_t a, std::int64_t plus = 0) {
  std::int64_t d = 0;
  if (__builtin_sub_overflow(b, a, &d) || __builtin_add_overflow(d, plus, &d))
    return b > a ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
  return d;
}

std::string steps_text(std::int64_t first, std::int64_t last) {
  return first == last ? "step " + std::to_string(first)
                       : "steps " + std::to_string(first) + "-" + std::to_string(last);
}

}  // namespace

std::optional<DetailPolicy> parse_detail_policy(std::string_view text) {
  DetailPolicy p;
  if (text == "full") {
    p.full = true;
    return p;
  }
  struct Key {
    std::string_view name;
    std::int64_t* into;
    bool seen = false;
    bool optional = false;
  };
  Key keys[] = {{"first", &p.first},
                {"every", &p.every},
                {"window", &p.window},
                {"recorder", &p.recorder},
                {"recorder_mb", &p.recorder_mb},
                {"after", &p.after, false, true}};
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (comma != std::string_view::npos && text.empty()) return std::nullopt;  // a trailing comma
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) return std::nullopt;
    auto k = std::find_if(std::begin(keys), std::end(keys), [&](const Key& x) { return x.name == item.substr(0, eq); });
    if (k == std::end(keys) || k->seen) return std::nullopt;
    std::optional<std::int64_t> v = parse_int(item.substr(eq + 1));
    if (!v || *v < 0) return std::nullopt;
    *k->into = *v;
    k->seen = true;
  }
  for (const Key& k : keys)
    if (!k.seen && !k.optional) return std::nullopt;
  return p;
}

RunSummary run_summary(const TraceDb& db) {
  RunSummary s;
  const gb::trace::Reader& reader = db.reader();

  // One pass over the steps (by rowid: no sort): the sums, the per-step values the order statistics need (durations
  // and gradient norms), and the loss's first, last and min. Sums are doubles: a damaged file's huge values cannot
  // overflow them.
  std::vector<double> durations, norms;
  LossSummary loss;
  GradNormSummary grad;
  Phases phases;
  double samples_ns = 0, tokens_ns = 0;
  bool first_row = true;
  db.each(
      "SELECT step, end_ns - start_ns, loss, grad_norm, data_ns, forward_ns, backward_ns, optimizer_ns, samples, "
      "tokens FROM steps ORDER BY step",
      [&](const Row& r) {
        const std::int64_t step = r.i64(0);
        const double dur = r.f64(1);
        if (first_row) s.first_step = step;
        first_row = false;
        s.last_step = step;
        durations.push_back(dur);
        if (!r.is_null(2)) {
          const double l = r.f64(2);
          if (loss.steps == 0) loss.first = loss.min = {l, step};
          if (l < loss.min.value) loss.min = {l, step};
          loss.last = {l, step};
          ++loss.steps;
        }
        if (!r.is_null(3)) {
          const double g = r.f64(3);
          if (grad.steps == 0 || g > grad.max.value) grad.max = {g, step};
          norms.push_back(g);
          ++grad.steps;
        }
        if (!r.is_null(4) && !r.is_null(5) && !r.is_null(6) && !r.is_null(7)) {
          ++phases.steps;
          phases.total_ns += dur;
          phases.data_ns += r.f64(4);
          phases.forward_ns += r.f64(5);
          phases.backward_ns += r.f64(6);
          phases.optimizer_ns += r.f64(7);
        }
        if (!r.is_null(8)) {
          ++s.samples_steps;
          s.samples += r.f64(8);
          samples_ns += dur;
        }
        if (!r.is_null(9)) {
          ++s.tokens_steps;
          s.tokens += r.f64(9);
          tokens_ns += dur;
        }
      });
  s.steps = static_cast<std::int64_t>(durations.size());
  if (phases.steps > 0) s.phases = phases;
  if (s.samples_steps > 0 && samples_ns > 0) s.samples_per_s = s.samples / (samples_ns / 1e9);
  if (s.tokens_steps > 0 && tokens_ns > 0) s.tokens_per_s = s.tokens / (tokens_ns / 1e9);
  s.step_time = summarize(std::move(durations));
  if (loss.steps > 0) {
    loss.tail_steps = std::max<std::int64_t>(1, loss.steps / 10);
    std::vector<double> tail;
    db.each("SELECT loss FROM steps WHERE loss IS NOT NULL ORDER BY step DESC LIMIT ?1", {loss.tail_steps},
            [&](const Row& r) { tail.push_back(r.f64(0)); });
    if (!tail.empty()) {
      std::sort(tail.begin(), tail.end());
      loss.tail_median = quantile(tail, 0.5);
      loss.tail_steps = static_cast<std::int64_t>(tail.size());
    }
    s.loss = loss;
  }
  if (!norms.empty()) {
    const auto mid = norms.begin() + static_cast<std::ptrdiff_t>((norms.size() - 1) / 2);
    std::nth_element(norms.begin(), mid, norms.end());
    grad.median = *mid;  // the lower middle; with an even count, the mean with the next one up (steps.h's quantile)
    if (norms.size() % 2 == 0) grad.median = (grad.median + *std::min_element(mid + 1, norms.end())) / 2;
    s.grad_norm = grad;
  }

  // Memory per device: the largest peaks with the first step that reached them, and each category's largest.
  std::map<int, DeviceStepMemory> devices;
  db.each(
      "SELECT step, device, allocated_peak, reserved_peak, unknown_peak, parameter_peak, gradient_peak, "
      "activation_peak, optimizer_state_peak, temporary_peak, input_peak, autograd_detail_peak FROM step_memory",
      [&](const Row& r) {
        const std::int64_t step = r.i64(0);
        const int device = static_cast<int>(
            std::clamp<std::int64_t>(r.i64(1), std::numeric_limits<int>::min(), std::numeric_limits<int>::max()));
        auto [it, fresh] = devices.try_emplace(device);
        DeviceStepMemory& d = it->second;
        d.device = device;
        const std::int64_t a = r.i64(2), v = r.i64(3);
        if (fresh || a > d.allocated_peak || (a == d.allocated_peak && step < d.allocated_peak_step)) {
          d.allocated_peak = a;
          d.allocated_peak_step = step;
        }
        if (fresh || v > d.reserved_peak || (v == d.reserved_peak && step < d.reserved_peak_step)) {
          d.reserved_peak = v;
          d.reserved_peak_step = step;
        }
        for (int c = 0; c < gb::trace::kMemCategories; ++c)
          d.category_peaks[static_cast<std::size_t>(c)] =
              std::max(d.category_peaks[static_cast<std::size_t>(c)], r.i64(4 + c));
        ++d.steps;
      });
  for (auto& [device, d] : devices) s.memory.push_back(d);

  // Detail: the windows by the one rule, and what the recorder and the probes said about the rest.
  s.detail = detail_windows(db);
  for (const gb::trace::DetailWindowRecord& w : s.detail.windows) {
    const auto reason = static_cast<std::size_t>(w.reason);
    if (reason < s.windows_by_reason.size()) ++s.windows_by_reason[reason];
  }
  s.steps_with_detail = s.detail.all() ? s.steps : s.detail.steps_with_detail();
  s.events_outside_detail = db.meta_int("events_outside_detail");
  s.recorder_dumps = db.meta_int("recorder_dumps");
  s.dropped_events = db.meta_int("dropped_events");
  s.shed_by_kind = shed_events(db);

  s.closed_cleanly = reader.meta("closed_cleanly") == "1";
  s.stopped_by = reader.meta("stopped_by");
  s.disk_full = reader.meta("disk_full");
  return s;
}

std::vector<std::pair<std::string, std::int64_t>> shed_events(const TraceDb& db) {
  std::vector<std::pair<std::string, std::int64_t>> shed;
  db.each("SELECT key, value FROM meta WHERE key LIKE 'shed\\_events.%' ESCAPE '\\' ORDER BY key", [&](const Row& r) {
    if (std::optional<std::int64_t> n = parse_int(r.text(1)))
      shed.emplace_back(std::string(r.text(0).substr(std::string_view("shed_events.").size())), *n);
  });
  return shed;
}

std::vector<std::string> describe_windows(const DetailWindows& d) {
  std::vector<std::string> lines;
  const std::optional<DetailPolicy> policy = parse_detail_policy(d.policy);
  for (std::size_t reason = 0; reason < gb::trace::kDetailReasonNames.size(); ++reason) {
    std::vector<const gb::trace::DetailWindowRecord*> ws;
    for (const gb::trace::DetailWindowRecord& w : d.windows)
      if (static_cast<std::size_t>(w.reason) == reason) ws.push_back(&w);
    if (ws.empty()) continue;
    std::string line = std::string(gb::trace::kDetailReasonNames[reason]) + ": ";
    if (ws.size() == 1) {
      line += steps_text(ws[0]->first_step, ws[0]->last_step);
    } else if (reason == static_cast<std::size_t>(gb::trace::DetailReason::periodic)) {
      std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = 0;
      std::vector<std::int64_t> gaps;
      for (std::size_t i = 0; i < ws.size(); ++i) {
        const std::int64_t n = sat_sub(ws[i]->last_step, ws[i]->first_step, 1);  // detail.h keeps first <= last
        lo = std::min(lo, n);
        hi = std::max(hi, n);
        if (i > 0) gaps.push_back(sat_sub(ws[i]->first_step, ws[i - 1]->first_step));
      }
      line += std::to_string(ws.size()) + " windows of " +
              (lo == hi ? std::to_string(lo) : std::to_string(lo) + "-" + std::to_string(hi)) +
              (hi == 1 ? " step" : " steps");
      std::sort(gaps.begin(), gaps.end());
      if (policy && !policy->full && policy->every > 0)
        line += " every " + std::to_string(policy->every);
      else if (gaps.front() == gaps.back())
        line += " every " + std::to_string(gaps.front());
      else
        line += " about every " + std::to_string(gaps[gaps.size() / 2]);
    } else {
      constexpr std::size_t kListed = 4;
      const std::size_t shown = ws.size() <= kListed ? ws.size() : kListed - 1;
      line += std::to_string(ws.size()) + " windows, ";
      for (std::size_t i = 0; i < shown; ++i) {
        const std::string t = steps_text(ws[i]->first_step, ws[i]->last_step);
        line += (i == 0 ? t : (i + 1 == shown && shown == ws.size() ? " and " : ", ") + t.substr(t.find(' ') + 1));
      }
      if (shown < ws.size()) line += " and " + std::to_string(ws.size() - shown) + " more";
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace gb::query
