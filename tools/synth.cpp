// tools/synth.cpp — the synthetic trace generator (contract in synth.h). One pass in time order on the main thread,
// so span ids (begin order per thread) and memory event ids (time order) come out as the schema requires.
#include "tools/synth.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "traces/writer.h"

namespace gb::tools {
namespace {

using namespace gb::trace;

// splitmix64: small, fast, and the same numbers on every platform.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  std::int64_t between(std::int64_t lo, std::int64_t hi) { return lo + static_cast<std::int64_t>(uniform() * (hi - lo)); }

 private:
  std::uint64_t s_;
};

constexpr std::int64_t kUs = 1000;
constexpr std::int64_t kMiB = 1 << 20;
constexpr int kDevice = 0;

struct ForwardOp {
  Id span = 0;
  std::int64_t seq = 0;
  Id module = 0;
  std::string backward_name;
  std::int64_t layer = -1;  // >= 0: the layer's linear (its node frees the activations and makes the gradients)
  std::int64_t saved_bytes = 0;
};

class Generator {
 public:
  Generator(const std::string& path, const SynthOptions& o)
      : w_(path, writer_options(o)), o_(o), rng_(o.seed), srng_(o.seed ^ 0x5EEDull) {}

  SynthResult run() {
    const bool long_run = o_.long_steps > 0;
    const std::int64_t L = std::max<std::int64_t>(1, o_.layers),
                       S = long_run ? o_.long_steps : std::max<std::int64_t>(1, o_.steps);
    S_ = S;
    k_ = o_.ops_per_layer;
    if (o_.spans > 0) k_ = std::max<std::int64_t>(0, ((o_.spans / S - 14) / L - 7) / 2);
    res_.ops_per_layer = k_;
    res_.steps = S;
    res_.nan_step = o_.nan_step == -2 ? -1 : (o_.nan_step < 0 ? S * 3 / 4 : std::min(o_.nan_step, S - 1));
    res_.nan_layer = res_.nan_step < 0 ? -1 : (o_.nan_layer < 0 ? L / 2 : std::min(o_.nan_layer, L - 1));
    act_bytes_ = o_.batch * o_.width * 4;
    if (long_run) res_.spike_step = o_.nan_step >= 0 ? std::min(o_.nan_step, S - 1) : S * 3 / 4;

    if (long_run) {
      w_.set_meta("command", "glassbox synth --long-steps " + std::to_string(S) + " --layers " + std::to_string(L));
      w_.set_meta("detail", "first=500,every=1000,window=5,recorder=16,recorder_mb=64");
    } else {
      w_.set_meta("command", "glassbox synth --steps " + std::to_string(S) + " --layers " + std::to_string(L));
    }
    w_.set_meta("device_name", "Synthetic GPU (glassbox synth)");
    w_.set_meta("device_total_bytes", std::to_string(16LL << 30));
    w_.set_meta("context_bytes", std::to_string(300 * kMiB));
    w_.set_meta("dropped_events", "0");
    w_.add(ThreadRecord{1, 1000, "main", ThreadRole::main, std::nullopt});
    for (std::int64_t k = 0; k < o_.workers; ++k)
      w_.add(ThreadRecord{2 + k, 1001 + k, "DataLoader worker " + std::to_string(k), ThreadRole::dataloader_worker, std::nullopt});
    if (o_.cuda) w_.add(ThreadRecord{2 + o_.workers, 1100, "CUDA stream 7", ThreadRole::cuda_stream, std::nullopt});
    w_.add(ModuleRecord{1, "", "MLP", std::nullopt});
    for (std::int64_t l = 0; l < L; ++l) {
      w_.add(ModuleRecord{l + 2, "layers." + std::to_string(l), "Linear", 1});
      const std::string wshape = "[" + std::to_string(o_.width) + ", " + std::to_string(o_.width) + "]";
      w_.add(ParamRecord{2 * l + 1, l + 2, "weight", wshape, o_.width * o_.width, DType::float32});
      w_.add(ParamRecord{2 * l + 2, l + 2, "bias", "[" + std::to_string(o_.width) + "]", o_.width, DType::float32});
    }
    res_.nan_param_id = res_.nan_layer >= 0 ? 2 * res_.nan_layer + 1 : 0;

    // Parameters and a workspace before the first step (outside any span).
    t_ = 50 * kUs;
    for (std::int64_t p = 0; p < 2 * L; ++p) param_addr_.push_back(alloc(param_bytes(p), MemCategory::parameter, {}, {}));
    alloc(32 * kMiB, MemCategory::unknown, {}, {});
    t_ += 200 * kUs;

    worker_free_.assign(static_cast<std::size_t>(std::max<std::int64_t>(1, o_.workers)), 0);
    if (long_run)
      run_long(L, S);
    else
      for (std::int64_t s = 0; s < S; ++s) step(s, L, S);
    res_.end_ns = t_;
    if (o_.oom) oom();
    w_.close();
    return res_;
  }

 private:
  std::int64_t param_bytes(std::int64_t p) const { return (p % 2 == 0 ? o_.width * o_.width : o_.width) * 4; }
  static WriterOptions writer_options(const SynthOptions& o) {
    WriterOptions w;
    if (o.long_steps > 0) w.commit_interval = std::chrono::hours(24);  // one transaction: the rows are batched
    return w;
  }

  // --- long runs: the summary of every step, detail in windows --------------------------------------------------
  struct Window {
    std::int64_t first = 0, last = 0;
    DetailReason reason = DetailReason::first;
  };
  // The engine's policy first=500,every=1000,window=5 with its flight recorder's anomaly and end dumps (16 steps).
  static std::vector<Window> plan_windows(std::int64_t S, std::int64_t spike) {
    std::vector<Window> w;
    auto add = [&w](std::int64_t a, std::int64_t b, DetailReason r) {
      Window x;
      x.first = a, x.last = b, x.reason = r;
      w.push_back(x);
    };
    add(0, std::min<std::int64_t>(499, S - 1), DetailReason::first);
    std::int64_t after = w.back().last + 1;  // recorder windows start after the one before
    if (spike >= 0) {
      const std::int64_t a = std::max(spike - 15, after);
      if (a <= spike) add(a, spike, DetailReason::anomaly), after = spike + 1;
    }
    const std::int64_t e = std::max(S - 16, after);
    if (e <= S - 1) add(e, S - 1, DetailReason::end);
    const std::size_t fixed = w.size();
    for (std::int64_t k = 1; k * 1000 <= S - 1; ++k) {
      const std::int64_t a = k * 1000, b = std::min(a + 4, S - 1);
      bool overlaps = false;
      for (std::size_t i = 0; i < fixed; ++i) overlaps = overlaps || (a <= w[i].last && w[i].first <= b);
      if (!overlaps) add(a, b, DetailReason::periodic);
    }
    std::sort(w.begin(), w.end(), [](const Window& x, const Window& y) { return x.first < y.first; });
    return w;
  }
  void run_long(std::int64_t L, std::int64_t S) {
    const std::vector<Window> windows = plan_windows(S, res_.spike_step);
    std::size_t wi = 0;
    std::int64_t window_start = 0;
    for (std::int64_t s = 0; s < S; ++s) {
      if (wi < windows.size() && windows[wi].first <= s) {
        const Window& win = windows[wi];
        if (s == win.first) {
          window_start = s == 0 ? 0 : t_;  // the first window holds the set-up before step 0
          if (s > 0) resume();
        }
        step(s, L, S);
        ++res_.detail_steps;
        if (s == win.last) {
          DetailWindowRecord d;
          d.id = ++res_.windows;
          d.first_step = win.first, d.last_step = win.last;
          d.start_ns = window_start, d.end_ns = t_;
          d.reason = win.reason;
          w_.add(d);
          ++wi;
        }
      } else {
        summary_step(s, L);
      }
    }
  }
  // Detail resuming after a gap: what memory is live now (SCHEMA.md memory_events resume / live / live_segment).
  void resume() {
    auto row = [&](MemAction a, std::int64_t addr, std::int64_t size, MemCategory c, OptId segment) {
      w_.add(MemoryEventRecord{++mem_id_, t_, a, kDevice, addr, size, size, segment, 0, c, std::nullopt, std::nullopt,
                               allocated_, reserved_});
      ++res_.memory_events;
    };
    row(MemAction::resume, 0, 0, MemCategory::unknown, std::nullopt);
    std::vector<std::int64_t> addrs;
    for (const auto& [a, b] : live_) addrs.push_back(a);
    std::sort(addrs.begin(), addrs.end());
    for (std::int64_t a : addrs) {
      const Live& b = live_.at(a);
      row(MemAction::live, a, b.size, b.category, b.segment);
    }
    for (const Segment& g : segments_) row(MemAction::live_segment, g.addr, g.size, MemCategory::unknown, g.id);
    t_ += kUs;
  }
  // Per-step noise that does not depend on which steps have detail: a hash of (seed, step, what).
  double noise(std::int64_t s, std::uint64_t what) const {
    Rng h(o_.seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(s) * 0xD1B54A32D192ED03ull + what);
    return h.uniform();
  }
  double long_loss(std::int64_t s) const {
    const double p = static_cast<double>(s) / static_cast<double>(S_);
    double loss = (0.15 + 2.15 * std::exp(-5.0 * p)) * std::exp(0.25 * (noise(s, 1) - 0.5));
    const std::int64_t k = res_.spike_step;
    if (k >= 0 && s == k)
      loss *= 25;
    else if (k >= 0 && s > k)
      loss *= 1.0 + 2.0 * std::exp(-static_cast<double>(s - k) / 300.0);
    return loss;
  }
  double long_lr(std::int64_t s) const {
    const double peak = 3e-4,
                 warm = static_cast<double>(std::max<std::int64_t>(1, std::min<std::int64_t>(2000, S_ / 20)));
    const double x = static_cast<double>(s);
    if (x < warm) return peak * (x + 1) / warm;
    return peak * 0.5 * (1.0 + std::cos(3.14159265358979 * (x - warm) / std::max(1.0, static_cast<double>(S_) - warm)));
  }
  std::optional<double> long_grad_norm(std::int64_t s) const {
    if (s == res_.nan_step) return std::nullopt;  // a NaN gradient: not finite, NULL
    const double p = static_cast<double>(s) / static_cast<double>(S_);
    double g = (0.25 + 2.0 * std::exp(-2.0 * p)) * std::exp(0.3 * (noise(s, 2) - 0.5));
    if (s + 1 == res_.spike_step) g *= 80;
    if (s == res_.spike_step) g *= 20;
    return g;
  }
  // The steps row (every version 5 column), its step_memory row and, at the spike, the loss_spike anomaly.
  void summary(std::int64_t s, std::int64_t start, std::int64_t end, std::int64_t data, std::int64_t backward,
               std::int64_t optimizer) {
    StepRecord r;
    r.step = s, r.start_ns = start, r.end_ns = end;
    r.loss = long_loss(s), r.lr = long_lr(s);
    r.data_ns = data, r.backward_ns = backward, r.optimizer_ns = optimizer;
    r.forward_ns = end - start - data - backward - optimizer;
    r.samples = o_.batch, r.tokens = o_.batch * 256;
    r.grad_norm = long_grad_norm(s);
    w_.add(r);
    StepMemoryRecord m = last_mem_;
    m.step = s;
    w_.add(m);
    if (s == res_.spike_step)
      w_.add(AnomalyRecord{++anomaly_id_, end, s, AnomalyKind::loss_spike, Severity::warning, std::nullopt,
                           std::nullopt, std::nullopt, std::nullopt, *r.loss,
                           "loss spiked to " + std::to_string(*r.loss) + " at step " + std::to_string(s) +
                               " (25x the median of the last 20 steps)",
                           std::nullopt});
  }
  // A step without detail: its summary from the detail steps' running mean phase times (noisy; every 7th batch
  // slow, waiting as long as the detail steps' slow batches did).
  void summary_step(std::int64_t s, std::int64_t L) {
    step_ = s;
    const std::int64_t start = t_;
    step_starts_.push_back(start);
    auto jitter = [&](std::int64_t base, std::uint64_t what) {
      return static_cast<std::int64_t>(static_cast<double>(base) * std::exp(0.2 * (noise(s, what) - 0.5)));
    };
    const std::int64_t data =
                           s % 7 == 3 ? jitter(slow_data_ < 0 ? 3 * phase_[0] : slow_data_, 3) : jitter(phase_[0], 3),
                       fwd = jitter(phase_[1], 4), bwd = jitter(phase_[2], 5), opt = jitter(phase_[3], 6);
    t_ += data + fwd + bwd + opt;
    summary(s, start, t_, data, bwd, opt);
    if (s % 10 == 0) {
      const double p = static_cast<double>(s) / static_cast<double>(S_), lr = long_lr(s);
      for (std::int64_t q = 0; q < 2 * L; ++q) {
        const std::int64_t l = q / 2;
        double norm = 0.02 * std::pow(1.5, static_cast<double>(l)) * (0.3 + 0.7 * std::exp(-2.0 * p)) *
                      std::exp(0.3 * (srng_.uniform() - 0.5));
        if (q % 2 == 1) norm *= 0.1;
        const double numel = static_cast<double>(param_bytes(q) / 4);
        w_.add(GradStatRecord{s, q + 1, norm, norm / std::sqrt(numel) * 4, 0, 0, 0.01 * srng_.uniform(),
                              10.0 + static_cast<double>(l), std::optional<double>(norm * lr)});
        ++res_.grad_stats;
      }
    }
    t_ += 20 * kUs;
  }

  // --- spans -------------------------------------------------------------------------------------------------
  Id begin(Id thread, SpanKind kind, std::string_view name, std::int64_t t, OptId module = {}, OptId seq = {}) {
    auto& stack = open_[thread];
    SpanRecord r{.id = span_id(thread, ++next_n_[thread]),
                 .kind = kind,
                 .name_id = intern_name(name),
                 .thread_id = thread,
                 .start_ns = t,
                 .end_ns = t,
                 .step = step_,
                 .parent_id = stack.empty() ? OptId{} : OptId{stack.back().id},
                 .seq = seq,
                 .module_id = module};
    stack.push_back(r);
    return r.id;
  }
  Id intern_name(std::string_view name) {
    const Id id = w_.intern(name);
    names_.emplace(id, std::string(name));
    return id;
  }
  std::string_view string_name(Id id) const {
    auto it = names_.find(id);
    return it == names_.end() ? std::string_view{} : std::string_view(it->second);
  }
  std::unordered_map<Id, std::string> names_;  // span names by strings.id
  void end(Id thread, std::int64_t t) {
    SpanRecord r = open_[thread].back();
    open_[thread].pop_back();
    r.end_ns = t;
    w_.add(r);
    ++res_.spans;
    if (r.kind == SpanKind::op) {  // what the engine's op probes record: input shapes and dtypes
      const std::string_view name = string_name(r.name_id);
      const std::string b = std::to_string(o_.batch), w = std::to_string(o_.width);
      std::string shapes = "[[" + b + ", " + w + "]]";
      if (name == "linear" || name == "matmul") shapes = "[[" + b + ", " + w + "], [" + w + ", " + w + "]]";
      else if (name == "add") shapes = "[[" + b + ", " + w + "], [" + w + "]]";
      else if (name == "cross_entropy") shapes = "[[" + b + ", " + w + "], [" + b + "]]";
      else if (name == "add_") shapes = "[[" + w + "], [" + w + "]]";
      const auto n = std::count(shapes.begin(), shapes.end(), '[') - 1;
      std::string dtypes;
      for (long i = 0; i < n; ++i) dtypes += i ? ",float32" : "float32";
      OpDetailsRecord d;
      d.span_id = r.id;
      d.input_shapes = w_.intern(shapes);
      d.dtypes = w_.intern(dtypes);
      w_.add(d);
    }
  }
  // A main-thread span of `dur` ns at the cursor; the cursor moves past it plus a small gap.
  Id leaf(SpanKind kind, std::string_view name, std::int64_t dur, OptId module = {}, OptId seq = {}) {
    Id id = begin(1, kind, name, t_, module, seq);
    t_ += dur;
    end(1, t_);
    t_ += rng_.between(300, 1500);
    return id;
  }

  // --- memory ------------------------------------------------------------------------------------------------
  struct Segment {
    Id id = 0;
    std::int64_t addr = 0, size = 0;
    std::map<std::int64_t, std::int64_t> free;  // addr -> bytes
  };
  void mem_event(MemAction a, std::int64_t addr, std::int64_t size, MemCategory c, OptId span, OptId module,
                 OptId segment) {
    w_.add(MemoryEventRecord{++mem_id_, t_, a, kDevice, addr, size, size, segment, 0, c, span, module, allocated_,
                             reserved_});
    ++res_.memory_events;
    res_.peak_allocated = std::max(res_.peak_allocated, allocated_);
    res_.peak_reserved = std::max(res_.peak_reserved, reserved_);
    peak_alloc_ = std::max(peak_alloc_, allocated_);
    peak_res_ = std::max(peak_res_, reserved_);
  }
  static std::int64_t rounded(std::int64_t size) { return (size + 511) / 512 * 512; }
  // Best fit over every segment's free ranges; a new segment when none fits (the caching allocator's behaviour).
  std::int64_t alloc(std::int64_t size, MemCategory c, OptId span, OptId module) {
    const std::int64_t need = rounded(size);
    Segment* best_seg = nullptr;
    std::int64_t best_addr = 0, best_len = std::numeric_limits<std::int64_t>::max();
    for (Segment& g : segments_)
      for (const auto& [a, len] : g.free)
        if (len >= need && len < best_len) best_seg = &g, best_addr = a, best_len = len;
    if (!best_seg) {
      Segment g;
      g.id = ++seg_id_;
      g.size = std::max<std::int64_t>(64 * kMiB, (need + 2 * kMiB - 1) / (2 * kMiB) * (2 * kMiB));
      g.addr = next_addr_;
      next_addr_ += (g.size + 32 * kMiB - 1) / (32 * kMiB) * (32 * kMiB) + 32 * kMiB;
      g.free[g.addr] = g.size;
      reserved_ += g.size;
      ++res_.segments;
      mem_event(MemAction::segment_alloc, g.addr, g.size, MemCategory::unknown, span, module, g.id);
      t_ += 200;
      segments_.push_back(std::move(g));
      best_seg = &segments_.back(), best_addr = best_seg->addr, best_len = best_seg->size;
    }
    best_seg->free.erase(best_addr);
    if (best_len > need) best_seg->free[best_addr + need] = best_len - need;
    allocated_ += size;
    live_[best_addr] = Live{size, best_seg->id, c};
    cat_now_[static_cast<std::size_t>(c)] += size;
    cat_peak_[static_cast<std::size_t>(c)] =
        std::max(cat_peak_[static_cast<std::size_t>(c)], cat_now_[static_cast<std::size_t>(c)]);
    mem_event(MemAction::alloc, best_addr, size, c, span, module, best_seg->id);
    t_ += 100;
    return best_addr;
  }
  void release(std::int64_t addr, OptId span, OptId module) {
    auto it = live_.find(addr);
    if (it == live_.end()) return;
    const auto [size, seg, cat] = it->second;
    allocated_ -= size;
    cat_now_[static_cast<std::size_t>(cat)] -= size;
    mem_event(MemAction::free, addr, size, MemCategory::unknown, span, module, seg);
    live_.erase(it);
    Segment& g = segments_[static_cast<std::size_t>(seg - 1)];
    auto [pos, ok] = g.free.emplace(addr, rounded(size));
    (void)ok;
    if (auto next = std::next(pos); next != g.free.end() && pos->first + pos->second == next->first)
      pos->second += next->second, g.free.erase(next);
    if (pos != g.free.begin())
      if (auto prev = std::prev(pos); prev->first + prev->second == pos->first) prev->second += pos->second, g.free.erase(pos);
    t_ += 100;
  }
  bool mem_layer(std::int64_t l) const { return l % std::max<std::int64_t>(1, o_.memory_layer_stride) == 0; }

  // --- CUDA: a kernel on the stream thread, launched now by `op`, serialized after the stream's last kernel
  void kernel(std::string_view name, Id op, std::int64_t dur, const char* grid, const char* block) {
    if (!o_.cuda) return;
    const Id stream = 2 + o_.workers;
    const std::int64_t start = std::max(stream_free_, t_ + 4 * kUs);
    begin(stream, SpanKind::cuda_kernel, name, start);
    const Id id = open_[stream].back().id;
    end(stream, start + dur);
    stream_free_ = start + dur + 2 * kUs;
    w_.add(KernelRecord{id, kDevice, 7, ++correlation_, op, grid, block, 96, 16384});
    ++res_.kernels;
  }

  // --- one training step ---------------------------------------------------------------------------------------
  void step(std::int64_t s, std::int64_t L, std::int64_t S) {
    step_ = s;
    const std::int64_t step_start = t_;
    step_starts_.push_back(step_start);
    peak_alloc_ = allocated_, peak_res_ = reserved_, cat_peak_ = cat_now_;
    const Id step_span = begin(1, SpanKind::step, "step", t_);
    (void)step_span;
    t_ += 2 * kUs;

    // zero_grad(set_to_none=True) frees last step's gradients.
    Id zg = begin(1, SpanKind::optimizer, "zero_grad", t_);
    t_ += 2 * kUs;
    for (std::int64_t& a : grad_addr_) release(a, zg, {});
    grad_addr_.clear();
    t_ += 3 * kUs;
    end(1, t_);
    t_ += kUs;

    // The batch: fetched and collated on worker s % workers, prefetched two steps ahead.
    const std::int64_t est_step = L * (2 * k_ * 12 * kUs + 400 * kUs) + 200 * kUs;
    const auto wk = static_cast<std::size_t>(s % std::max<std::int64_t>(1, o_.workers));
    const std::int64_t request = s >= 2 ? step_starts_[static_cast<std::size_t>(s - 2)] : 0;
    std::int64_t wt = std::max(worker_free_[wk], request);
    const double slow = (s % 7 == 3) ? 3.0 : 1.0;
    const auto fetch = static_cast<std::int64_t>(est_step * (0.5 + 0.4 * rng_.uniform()) * slow);
    const Id worker = 2 + static_cast<Id>(wk);
    if (o_.workers > 0) {
      begin(worker, SpanKind::dataloader, "fetch", wt);
      wt += fetch;
      end(worker, wt);
      wt += 20 * kUs;
      begin(worker, SpanKind::dataloader, "collate", wt);
      wt += static_cast<std::int64_t>(fetch * 0.15);
      end(worker, wt);
      worker_free_[wk] = wt + 50 * kUs;
    }
    const Id wait = begin(1, SpanKind::dataloader, "wait", t_);
    const std::int64_t wait_start = t_;
    t_ = std::max(t_ + 15 * kUs, wt + 10 * kUs);
    end(1, t_);
    const std::int64_t data_ns = t_ - wait_start;
    t_ += kUs;
    const std::int64_t input = alloc(act_bytes_ / 2, MemCategory::input, wait, {});

    // Forward.
    std::vector<ForwardOp> fwd;
    std::vector<std::vector<std::int64_t>> acts(static_cast<std::size_t>(L));
    begin(1, SpanKind::module, "MLP", t_, 1);
    t_ += 3 * kUs;
    static const char* kElementwise[] = {"relu", "dropout", "mul", "gelu", "add", "layer_norm"};
    static const char* kElementwiseBackward[] = {"ReluBackward0", "NativeDropoutBackward0", "MulBackward0",
                                                 "GeluBackward0", "AddBackward0", "NativeLayerNormBackward0"};
    for (std::int64_t l = 0; l < L; ++l) {
      const Id mod = l + 2;
      begin(1, SpanKind::module, "layers." + std::to_string(l), t_, mod);
      t_ += 2 * kUs;
      const std::int64_t seq = ++seq_;
      const Id linear = begin(1, SpanKind::op, "linear", t_, mod, seq);
      t_ += kUs;
      if (mem_layer(l)) acts[static_cast<std::size_t>(l)].push_back(alloc(act_bytes_, MemCategory::activation, linear, mod));
      const Id mm = begin(1, SpanKind::op, "matmul", t_, mod);
      const std::int64_t tmp = mem_layer(l) ? alloc(act_bytes_ / 4, MemCategory::temporary, mm, mod) : 0;
      const std::int64_t mm_dur = rng_.between(40 * kUs, 90 * kUs);
      kernel("ampere_sgemm_128x64_tn", mm, mm_dur * 3 / 5, "8,16,1", "256,1,1");
      t_ += mm_dur;
      if (tmp) release(tmp, mm, mod);
      end(1, t_);
      t_ += kUs;
      leaf(SpanKind::op, "add", rng_.between(5 * kUs, 12 * kUs), mod);
      end(1, t_);  // linear
      t_ += kUs;
      fwd.push_back(ForwardOp{linear, seq, mod, "AddmmBackward0", l, act_bytes_});
      for (std::int64_t j = 0; j < k_; ++j) {
        const int e = static_cast<int>((j + l) % 6);
        const std::int64_t eseq = ++seq_;
        const Id op = begin(1, SpanKind::op, kElementwise[e], t_, mod, eseq);
        if (j == 0 && mem_layer(l))
          acts[static_cast<std::size_t>(l)].push_back(alloc(act_bytes_, MemCategory::activation, op, mod));
        const std::int64_t dur = rng_.between(3 * kUs, 15 * kUs);
        kernel("vectorized_elementwise_kernel", op, dur / 2, "1024,1,1", "128,1,1");
        t_ += dur;
        end(1, t_);
        t_ += rng_.between(300, 1200);
        fwd.push_back(ForwardOp{op, eseq, mod, kElementwiseBackward[e], -1, j == 0 ? act_bytes_ : 0});
      }
      t_ += kUs;
      end(1, t_);  // layers.l
      t_ += kUs;
    }
    const std::int64_t lseq = ++seq_;
    fwd.push_back(ForwardOp{leaf(SpanKind::op, "cross_entropy", rng_.between(20 * kUs, 40 * kUs), 1, lseq), lseq, 1,
                            "NllLossBackward0", -1, 0});
    end(1, t_);  // MLP
    t_ += 2 * kUs;

    // Backward: discovery, execution (one node per forward op, reverse order), release.
    begin(1, SpanKind::backward_phase, "backward", t_);
    const std::int64_t backward_start = t_;
    t_ += kUs;
    leaf(SpanKind::backward_phase, "discovery", rng_.between(10 * kUs, 30 * kUs) + L * k_ * 200);
    begin(1, SpanKind::backward_phase, "execution", t_);
    t_ += kUs;
    std::vector<Id> node_ids;
    for (auto it = fwd.rbegin(); it != fwd.rend(); ++it) {
      const Id node = begin(1, SpanKind::backward_node, it->backward_name, t_, it->module, it->seq);
      t_ += kUs;
      if (it->layer >= 0) {
        const bool mem = mem_layer(it->layer);
        const std::int64_t detail = mem ? alloc(o_.width * 64, MemCategory::autograd_detail, node, it->module) : 0;
        const std::int64_t dur = rng_.between(60 * kUs, 140 * kUs);
        kernel("ampere_sgemm_64x64_nt", node, dur / 2, "16,16,1", "128,1,1");
        t_ += dur;
        for (std::int64_t a : acts[static_cast<std::size_t>(it->layer)]) release(a, node, it->module);
        if (mem) {
          grad_addr_.push_back(alloc(param_bytes(2 * it->layer), MemCategory::gradient, node, it->module));
          grad_addr_.push_back(alloc(param_bytes(2 * it->layer + 1), MemCategory::gradient, node, it->module));
          release(detail, node, it->module);
        }
        if (s == res_.nan_step && it->layer == res_.nan_layer) {
          res_.nan_t_ns = t_;
          w_.add(AnomalyRecord{++anomaly_id_, t_, s, AnomalyKind::nonfinite_backward, Severity::error, node,
                               std::nullopt, it->module, res_.nan_param_id, 12.0,
                               "first non-finite gradient: layers." + std::to_string(it->layer) +
                                   ".weight has NaN values after AddmmBackward0 (step " + std::to_string(s) +
                                   "); check the inputs of layers." + std::to_string(it->layer), std::nullopt});
        }
      } else {
        t_ += rng_.between(4 * kUs, 20 * kUs);
      }
      end(1, t_);
      t_ += rng_.between(300, 1000);
      if (s == 0) {
        node_ids.push_back(add_graph_node(*it, node));
        if (it->layer >= 0)  // the layer's weight and bias are leaves: AccumulateGrad nodes fed by this node
          for (std::int64_t p = 0; p < 2; ++p) {
            const Id acc = ++graph_id_;
            w_.add(GraphNodeRecord{acc, 0, -1, w_.intern("AccumulateGrad"), std::nullopt, it->module, 0});
            w_.add(GraphEdgeRecord{0, node_ids.back(), acc, p + 1});
          }
      }
    }
    t_ += kUs;
    end(1, t_);  // execution
    leaf(SpanKind::backward_phase, "release", rng_.between(5 * kUs, 15 * kUs));
    end(1, t_);  // backward
    const std::int64_t backward_ns = t_ - backward_start;
    t_ += 2 * kUs;
    if (s == 0)
      for (std::size_t i = 1; i < node_ids.size(); ++i) w_.add(GraphEdgeRecord{0, node_ids[i - 1], node_ids[i], 0});

    // Optimizer: SGD with momentum; the momentum buffers appear at the first step.
    begin(1, SpanKind::optimizer, "SGD.step", t_);
    const std::int64_t optimizer_start = t_;
    t_ += 2 * kUs;
    for (std::int64_t p = 0; p < 2 * L; ++p) {
      const Id op = begin(1, SpanKind::op, "add_", t_, p / 2 + 2);
      if (s == 0) alloc(param_bytes(p), MemCategory::optimizer_state, op, p / 2 + 2);
      t_ += p % 2 == 0 ? rng_.between(15 * kUs, 30 * kUs) : rng_.between(2 * kUs, 4 * kUs);
      end(1, t_);
      t_ += kUs;
    }
    end(1, t_);
    const std::int64_t optimizer_ns = t_ - optimizer_start;
    t_ += kUs;
    release(input, {}, {});
    t_ += 5 * kUs;
    end(1, t_);  // step

    // Step end: steps row, counters, gradient statistics, anomalies.
    const double progress = static_cast<double>(s) / static_cast<double>(S);
    const double short_loss = 0.15 + 2.15 * std::exp(-4.0 * progress) + 0.05 * rng_.uniform();
    const bool long_run = o_.long_steps > 0;
    const double loss = long_run ? long_loss(s) : short_loss;
    const double lr = long_run ? long_lr(s) : 0.05 * 0.5 * (1.0 + std::cos(3.14159265358979 * progress));
    if (long_run) {
      StepMemoryRecord& m = last_mem_;
      m.device = kDevice;
      m.allocated_peak = peak_alloc_, m.reserved_peak = peak_res_, m.allocated_end = allocated_,
      m.reserved_end = reserved_;
      m.unknown_peak = cat_peak_[0], m.parameter_peak = cat_peak_[1], m.gradient_peak = cat_peak_[2];
      m.activation_peak = cat_peak_[3], m.optimizer_state_peak = cat_peak_[4], m.temporary_peak = cat_peak_[5];
      m.input_peak = cat_peak_[6], m.autograd_detail_peak = cat_peak_[7];
      const std::int64_t forward_ns = t_ - step_start - data_ns - backward_ns - optimizer_ns;
      // The summary-only steps' base: the detail steps' running means (the slow batches' wait apart).
      const std::array<std::int64_t, 4> now = {data_ns, forward_ns, backward_ns, optimizer_ns};
      for (std::size_t k = s % 7 == 3 ? 1 : 0; k < 4; ++k) phase_[k] = s == 0 ? now[k] : (phase_[k] * 15 + now[k]) / 16;
      if (s % 7 == 3) slow_data_ = slow_data_ < 0 ? data_ns : (slow_data_ * 7 + data_ns) / 8;
      summary(s, step_start, t_, data_ns, backward_ns, optimizer_ns);
    } else {
      w_.add(StepRecord{.step = s, .start_ns = step_start, .end_ns = t_, .loss = loss, .lr = lr});
    }
    w_.add(CounterRecord{t_, w_.intern("loss"), loss});
    w_.add(CounterRecord{t_, w_.intern("lr"), lr});
    for (std::int64_t p = 0; p < 2 * L; ++p) {
      const std::int64_t l = p / 2;
      double norm = 0.02 * std::pow(1.5, static_cast<double>(l)) * (0.3 + 0.7 * std::exp(-2.0 * progress)) *
                    std::exp(0.3 * (rng_.uniform() - 0.5));
      if (p % 2 == 1) norm *= 0.1;
      std::int64_t nans = 0;
      if (l == res_.nan_layer && p % 2 == 0 && s == res_.nan_step - 1) {
        norm *= 80;
        w_.add(AnomalyRecord{++anomaly_id_, t_, s, AnomalyKind::exploding_norm, Severity::warning, std::nullopt,
                             std::nullopt, l + 2, p + 1, norm,
                             "gradient norm of layers." + std::to_string(l) + ".weight jumped to " +
                                 std::to_string(norm) + " (80x its running mean)", std::nullopt});
      }
      if (l == res_.nan_layer && p % 2 == 0 && s == res_.nan_step) {
        nans = 12;  // a gradient with NaN elements has a NaN norm (stored as NULL, read back as NaN)
        norm = std::numeric_limits<double>::quiet_NaN();
      }
      const double numel = static_cast<double>(param_bytes(p) / 4);
      w_.add(GradStatRecord{s, p + 1, norm, norm / std::sqrt(numel) * 4, nans, 0, 0.01 * rng_.uniform(),
                            10.0 + static_cast<double>(l),
                            nans ? std::optional<double>() : std::optional<double>(norm * lr)});
      ++res_.grad_stats;
    }
    t_ += 20 * kUs;
  }

  // An allocation larger than what is left of the device: PyTorch's message, with what held the memory.
  void oom() {
    const std::int64_t capacity = 16LL << 30, free = capacity - reserved_ - 300 * kMiB;
    const std::int64_t requested = free + 20 * kMiB;  // just more than is left
    res_.oom_t_ns = t_;
    mem_event(MemAction::oom, 0, requested, MemCategory::activation, std::nullopt, std::nullopt, std::nullopt);
    auto gib = [](std::int64_t b) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(b) / (1LL << 30));
      return std::string(buf);
    };
    std::int64_t largest = 0;
    for (const Segment& g : segments_)
      for (const auto& [a, len] : g.free) largest = std::max(largest, len);
    w_.add(OomReportRecord{1, t_, requested, capacity, free, allocated_, reserved_, largest,
                           "CUDA out of memory. Tried to allocate " + gib(requested) + ". GPU 0 has a total capacity "
                           "of " + gib(capacity) + " of which " + gib(free) + " is free. Of the allocated memory " +
                           gib(allocated_) + " is allocated by glassbox, and " + gib(reserved_ - allocated_) +
                           " is reserved by glassbox but unallocated. If reserved but unallocated memory is large "
                           "try setting GLASSBOX_ALLOC_CONF=expandable_segments:True to avoid fragmentation.\n"
                           "Largest free block: " + gib(largest) + ".\nWhat held the memory: parameters, "
                           "optimizer state (momentum) and the cached segments of the last step."});
    t_ += kUs;
  }

  Id add_graph_node(const ForwardOp& f, Id node_span) {
    (void)node_span;
    const Id id = ++graph_id_;
    w_.add(GraphNodeRecord{id, 0, f.seq, w_.intern(f.backward_name), f.span, f.module, f.saved_bytes});
    return id;
  }

  Writer w_;
  SynthOptions o_;
  Rng rng_;
  SynthResult res_;
  std::int64_t k_ = 0, act_bytes_ = 0, t_ = 0, seq_ = 0;
  OptId step_;
  std::map<Id, std::int64_t> next_n_;
  std::map<Id, std::vector<SpanRecord>> open_;
  std::vector<std::int64_t> worker_free_, step_starts_, param_addr_, grad_addr_;
  struct Live {
    std::int64_t size = 0;
    Id segment = 0;
    MemCategory category = MemCategory::unknown;
  };
  std::unordered_map<std::int64_t, Live> live_;  // addr -> block
  // long runs: the step's peaks (reset at each detail step's start), the last detail step's step_memory row and
  // phase times (data, forward, backward, optimizer), which the summary-only steps repeat with noise
  std::int64_t S_ = 0, peak_alloc_ = 0, peak_res_ = 0;
  std::array<std::int64_t, 8> cat_now_{}, cat_peak_{};
  StepMemoryRecord last_mem_{};
  std::array<std::int64_t, 4> phase_{2000 * kUs, 3000 * kUs, 5000 * kUs, 1000 * kUs};
  std::int64_t slow_data_ = -1;  // a slow batch's wait (every 7th step), the detail steps' running mean
  Rng srng_;
  std::vector<Segment> segments_;                                      // segment id - 1 -> segment
  std::int64_t allocated_ = 0, reserved_ = 0, next_addr_ = 0x7f0000000000, mem_id_ = 0, seg_id_ = 0;
  std::int64_t stream_free_ = 0, correlation_ = 0;
  Id anomaly_id_ = 0, graph_id_ = 0;
};

}  // namespace

SynthResult write_synthetic_trace(const std::string& path, const SynthOptions& options) {
  return Generator(path, options).run();
}

}  // namespace gb::tools
