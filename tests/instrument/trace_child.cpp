// tests/instrument/trace_child.cpp — a traced program the instrument tests run in a fresh process, to check what
// only a whole process shows: GLASSBOX_TRACE at start-up, exit, signals, uncaught exceptions, SIGKILL, a full disk.
//   trace_child spans N        N nested spans, an instant and a counter, then a normal exit
//   trace_child throw          a few spans, then an exception escapes main
//   trace_child signal NAME    a few spans, then raise(SIGINT or SIGTERM) from inside an open span
//   trace_child stream         spans forever; after each, prints "n steady_ns" (for the SIGKILL test)
//   trace_child fsize PATH     a Session on PATH under a 2 MiB file-size limit: writing fails mid-run
//   trace_child steps N K US   N training steps (StepScope) of K spans and US microseconds of work each; prints
//                              "step steady_ns" after each (the long-run and prompt-signal tests; GLASSBOX_DETAIL
//                              picks the detail)
//   trace_child nvtx           a StepScope holding 2 outer/inner span pairs (for the NVTX tool of nvtx_test.cpp)
//   trace_child second PATH    a few spans, then a Session on PATH while GLASSBOX_TRACE records: its error escapes
//                              main (killed by SIGALRM after 20 s if that hangs)
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>

#include "instrument/probe.h"
#include "instrument/session.h"

using gb::trace::SpanKind;

namespace {
std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
void some_spans(int n) {
  for (int i = 0; i < n; ++i) {
    GB_TRACE_SPAN(SpanKind::step, "outer");
    GB_TRACE_SPAN(SpanKind::op, "inner");
  }
}
}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "spans") {
    int n = argc > 2 ? std::atoi(argv[2]) : 10;
    some_spans(n);
    GB_TRACE_INSTANT("done");
    GB_TRACE_COUNTER("n", n);
    return 0;
  }
  if (mode == "throw") {
    some_spans(5);
    GB_TRACE_SPAN(SpanKind::op, "throwing");
    throw std::runtime_error("boom from trace_child");
  }
  if (mode == "signal") {
    int sig = argc > 2 && std::strcmp(argv[2], "SIGTERM") == 0 ? SIGTERM : SIGINT;
    some_spans(5);
    GB_TRACE_SPAN(SpanKind::op, "interrupted");
    std::raise(sig);
    std::this_thread::sleep_for(std::chrono::seconds(5));  // the collector finishes the trace and re-raises
    return 3;                                                // not reached when the signal kills the process
  }
  if (mode == "stream") {
    for (std::int64_t n = 1;; ++n) {
      { GB_TRACE_SPAN(SpanKind::op, "tick"); }
      std::printf("%lld %lld\n", static_cast<long long>(n), static_cast<long long>(steady_ns()));
      std::fflush(stdout);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  if (mode == "steps" && argc > 4) {
    const long long n = std::atoll(argv[2]), k = std::atoll(argv[3]), us = std::atoll(argv[4]);
    for (long long step = 0; step < n; ++step) {
      {
        gb::trace::StepScope st(step);
        const std::int64_t until = steady_ns() + us * 1000;
        for (long long i = 0; i < k; ++i) {
          GB_TRACE_SPAN(SpanKind::op, "work");
        }
        while (steady_ns() < until) {
        }
        st.set_loss(1.0 / double(step + 1));
      }
      std::printf("%lld %lld\n", step, static_cast<long long>(steady_ns()));
      if (step % 64 == 0) std::fflush(stdout);
    }
    std::fflush(stdout);
    return 0;
  }
  if (mode == "nvtx") {
    gb::trace::StepScope step(7);
    some_spans(2);
    return 0;
  }
  if (mode == "second" && argc > 2) {
    alarm(20);
    some_spans(5);
    gb::trace::Session second(argv[2]);  // throws gb::trace::Error: one session at a time
    return 0;
  }
  if (mode == "fsize" && argc > 2) {
    std::signal(SIGXFSZ, SIG_IGN);  // a write past the limit fails with EFBIG instead of killing the process
    rlimit lim{2 << 20, 2 << 20};
    setrlimit(RLIMIT_FSIZE, &lim);
    gb::trace::Session session(argv[2]);
    for (int i = 0; i < 1000000 && gb::trace::enabled(); ++i) {
      GB_TRACE_SPAN(SpanKind::op, "fill");
      if (i % 100 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    std::printf("still running, tracing %s\n", gb::trace::enabled() ? "on" : "off");
    return 0;
  }
  std::fprintf(stderr, "usage: trace_child spans N | throw | signal SIGINT|SIGTERM | stream | fsize PATH\n");
  return 2;
}
