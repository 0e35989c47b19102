// engine/monitor/deferred.cpp — tickets for scans whose results come later (deferred.h): cpu results at once, cuda
// results in per-device slot buffers (cuda/scan_kernels.h) read back together when the first of them is asked for.
#include "monitor/deferred.h"

#include <atomic>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>

#include "cuda/scan_kernels.h"
#include "monitor/monitor.h"
#include "monitor/run.h"

namespace gb::monitor::detail {

namespace {

std::atomic<bool> g_defer_cpu{false};

constexpr int kSlots = 4096;  // per device: 192 KB; a step with more scans reads back when the buffer is full

struct DeviceSlots {
  cuda_kernels::ScanSlot* dev = nullptr;  // kept for the process: a session's end never frees device memory
  std::vector<int64_t> tickets;           // the ticket of each slot in use, in slot order
};

struct Queue {
  std::mutex mu;
  int64_t base = 0;                 // the ticket of results[0]: tickets are never reused
  std::vector<ScanResult> results;  // by ticket - base
  std::vector<char> known;          // by ticket - base: final
  std::map<int, DeviceSlots> devices;
};
Queue& queue() {
  static Queue* q = new Queue;  // never destroyed: a session may stop during static destruction
  return *q;
}

ScanResult from_slot(const cuda_kernels::ScanSlot& s, int64_t n) {
  ScanResult r;
  r.scanned = true;
  r.n = n;
  r.nan = static_cast<int64_t>(s.nan);
  r.inf = static_cast<int64_t>(s.inf);
  r.zeros = static_cast<int64_t>(s.zeros);
  r.sumsq = s.sumsq;
  double m = 0;
  std::memcpy(&m, &s.max_bits, sizeof m);
  r.max_abs = r.inf ? INFINITY : m;
  r.first = s.first;
  return r;
}

// Reads one device's pending slots into their tickets' results. q.mu held.
void read_back(Queue& q, int device, DeviceSlots& d) {
  const int n = static_cast<int>(d.tickets.size());
  if (n == 0) return;
  std::vector<cuda_kernels::ScanSlot> host(static_cast<size_t>(n));
  cuda_kernels::scan_slots_read(device, d.dev, n, host.data());
  for (int i = 0; i < n; ++i) {
    const auto t = static_cast<size_t>(d.tickets[static_cast<size_t>(i)] - q.base);
    q.results[t] = from_slot(host[static_cast<size_t>(i)], q.results[t].n);
    q.known[t] = 1;
  }
  d.tickets.clear();
}

}  // namespace

void set_defer_cpu(bool on) { g_defer_cpu.store(on, std::memory_order_relaxed); }

bool deferrable(const Tensor& t) {
  if (!t.defined() || !t.is_floating_point() || t.numel() == 0) return false;
  return t.is_cuda() || (t.device().is_cpu() && g_defer_cpu.load(std::memory_order_relaxed));
}

std::vector<int64_t> defer_scans(const std::vector<Tensor>& ts) {
  std::vector<int64_t> tickets(ts.size(), -1);
  Busy busy;  // the contiguous copies below are the monitor's own work
  Queue& q = queue();
  std::map<int, std::vector<std::pair<size_t, Tensor>>> on_device;  // device -> (index, contiguous tensor)
  for (size_t i = 0; i < ts.size(); ++i) {
    const Tensor& t = ts[i];
    if (!t.defined() || !t.is_floating_point() || t.numel() == 0) continue;
    if (t.is_cuda()) {
      on_device[static_cast<int>(t.device().index())].emplace_back(i, t.is_contiguous() ? t : t.contiguous());
      continue;
    }
    if (!scannable(t)) continue;
    ScanResult r = scan(t);
    if (t.numel() == 1) r.first = t.item<double>();  // a loss: read in place
    std::lock_guard lock(q.mu);
    q.results.push_back(r);
    q.known.push_back(1);
    tickets[i] = q.base + static_cast<int64_t>(q.results.size()) - 1;
  }
  std::lock_guard lock(q.mu);
  for (auto& [device, list] : on_device) {
    DeviceSlots& d = q.devices[device];
    if (!d.dev) d.dev = cuda_kernels::scan_slots_alloc(device, kSlots);
    cuda_kernels::ScanLaunch l;
    auto launch = [&] {
      cuda_kernels::monitor_scan(l);
      l.count = 0;
    };
    l.device = device;
    l.slots = d.dev;
    for (auto& [index, c] : list) {
      if (static_cast<int>(d.tickets.size()) == kSlots) {  // full: launch what is queued, one early wait
        launch();
        read_back(q, device, d);
      }
      const int64_t ticket = q.base + static_cast<int64_t>(q.results.size());
      ScanResult pending;
      pending.n = c.numel();
      q.results.push_back(pending);
      q.known.push_back(0);
      l.data[l.count] = c.data_ptr();
      l.numel[l.count] = c.numel();
      l.dtype[l.count] = c.scalar_type();
      l.slot[l.count] = static_cast<int>(d.tickets.size());
      d.tickets.push_back(ticket);
      tickets[index] = ticket;
      if (++l.count == cuda_kernels::kMaxScanTensors) launch();
    }
    if (l.count) launch();
  }
  return tickets;
}

int64_t defer_scan(const Tensor& t) { return defer_scans({t})[0]; }

ScanResult deferred_result(int64_t ticket) {
  Queue& q = queue();
  std::lock_guard lock(q.mu);
  // not scanned, or forgotten: finite
  if (ticket < q.base || ticket >= q.base + static_cast<int64_t>(q.results.size())) return {};
  const auto i = static_cast<size_t>(ticket - q.base);
  if (!q.known[i])
    for (auto& [device, d] : q.devices) read_back(q, device, d);
  return q.results[i];
}

void deferred_reset() {
  Queue& q = queue();
  std::lock_guard lock(q.mu);
  // slots still pending hold partial sums: read (which zeroes them) before their tickets are forgotten
  for (auto& [device, d] : q.devices) read_back(q, device, d);
  q.base += static_cast<int64_t>(q.results.size());
  q.results.clear();
  q.known.clear();
}

bool deferred_forgotten(int64_t ticket) {
  Queue& q = queue();
  std::lock_guard lock(q.mu);
  return ticket >= 0 && ticket < q.base;
}

void defer_check(std::unique_ptr<PendingCheck> check) {
  Run& r = run();
  bool now = false, bound = false;
  {
    std::lock_guard lock(r.mu);
    r.pending.push_back(std::move(check));
    // raise mode stops at the op: one wait for the device per check. Ops that no step end judges (an evaluation
    // loop without optimizer steps) are judged every kSlots checks, so that what waits stays bounded.
    bound = r.pending.size() >= static_cast<size_t>(kSlots);
    now = r.cfg.mode == Mode::raise || bound;
  }
  if (now) judge_pending();
  if (bound) deferred_reset();
}

void judge_pending() {
  Run& r = run();
  for (;;) {
    std::vector<std::unique_ptr<PendingCheck>> checks;
    {
      std::lock_guard lock(r.mu);
      checks.swap(r.pending);
    }
    if (checks.empty()) return;
    // raise mode: a finding throws, and the checks after it are dropped (the cpu path would never have made them)
    for (auto& c : checks) {
      AtSite at(c->site);
      c->judge();
    }
  }
}

}  // namespace gb::monitor::detail
