// instrument/session.cpp — the one recording of the process: started by a Session or GLASSBOX_TRACE, finished by
// the session's end, exit, std::terminate, SIGINT or SIGTERM.
#include "instrument/session.h"

#include <pthread.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "instrument/collector.h"
#include "instrument/cupti.h"
#include "traces/error.h"

namespace gb::trace {
namespace detail {

// Defined here, next to the GLASSBOX_TRACE session: every probe reads g_recording, so every program with a probe
// links this file and its environment session.
std::atomic<bool> g_recording{false};
std::atomic<std::uint8_t> g_span_sinks{0};
std::atomic<std::int32_t> g_step{-1};
std::atomic<std::int32_t> g_step_scopes{0};
std::atomic<StepEndHook> g_step_end_hook{nullptr};

bool stop_recording_within(const std::string& stopped_by, std::chrono::milliseconds wait);

namespace {

// Guards g_collector and the handlers. The terminate handler only tries it for a while (stop_recording_within): it
// must not wait forever on a lock its own thread may hold (std::terminate does not unwind the stack). A plain mutex
// polled with try_lock, not a timed_mutex: ThreadSanitizer does not see pthread_mutex_clocklock.
std::mutex g_session_mu;
Collector* g_collector = nullptr;  // the recording, if any
std::atomic<Collector*> g_signal_target{nullptr};
std::string g_path;
struct sigaction g_old_int {
}, g_old_term{};
bool g_int_installed = false, g_term_installed = false;
std::terminate_handler g_old_terminate = nullptr;
pthread_t g_session_thread{};  // the thread that started the recording: the training's, usually
std::mutex g_detail_mu;
DetailPolicy g_detail;  // the recording session's (guarded by g_detail_mu)

struct SessionHook {
  void (*start)();
  void (*stop)();
};
std::vector<SessionHook>& session_hooks() {  // guarded by g_session_mu; never destroyed (exit may stop a session)
  static auto* v = new std::vector<SessionHook>;
  return *v;
}

extern "C" void on_signal(int sig) {
  // Async-signal-safe: hand the signal to the collector thread, which finishes the trace and re-raises it. This
  // thread (and the session's thread, sent the signal too) waits here meanwhile, so the training stops at once and
  // the collector has the cores: the program ends promptly however far behind the trace was.
  Collector* c = g_signal_target.load(std::memory_order_relaxed);
  if (!c) {
    std::signal(sig, SIG_DFL);
    std::raise(sig);
    return;
  }
  c->request_signal_stop(sig);
  if (!pthread_equal(pthread_self(), g_session_thread)) pthread_kill(g_session_thread, sig);
  const timespec tick{0, 1000000};
  for (int ms = 0; ms < 10000 && !c->signal_done(); ++ms) nanosleep(&tick, nullptr);
  // The collector re-raises the signal once the trace is finished; if it could not in time, the default action.
  const timespec grace{0, 200000000};
  nanosleep(&grace, nullptr);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void install_handler(int sig, struct sigaction& old, bool& installed) {
  installed = false;
  if (sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO)) return;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  installed = sigaction(sig, &sa, nullptr) == 0;
}

void restore_handler(int sig, struct sigaction& old, bool& installed) {
  if (installed) sigaction(sig, &old, nullptr);
  installed = false;
}

[[noreturn]] void on_terminate() {
  std::string why = "std::terminate";
  if (std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      why = std::string("uncaught exception: ") + x.what();
    } catch (...) {
      why = "uncaught exception";
    }
  }
  // Finish the trace if the session lock can be had. It cannot when this very thread holds it (terminate from a
  // session hook): then the trace is left as a crash leaves it, readable up to the last commit, not closed cleanly.
  if (!stop_recording_within(why, std::chrono::seconds(2)))
    std::fprintf(stderr,
                 "glassbox: warning: the trace was not finished at std::terminate (its session lock is held); "
                 "it is readable up to its last commit\n");
  std::terminate_handler next = g_old_terminate;
  if (next && next != on_terminate) next();
  std::abort();
}

}  // namespace

bool start_recording(const std::string& path, const SessionOptions& options) {
  std::unique_lock lock(g_session_mu);
  if (g_collector) {
    std::string message = "glassbox: cannot start a trace session for '" + path + "': the trace '" + g_path +
                          "' is already recording (one session at a time; GLASSBOX_TRACE starts one for the whole "
                          "run: unset it, or stop the first Session before starting another)";
    lock.unlock();  // uncaught, the throw goes to std::terminate without unwinding: the handler needs this lock
    throw Error(message);
  }
  std::unique_ptr<Writer> writer;
  try {
    writer = std::make_unique<Writer>(path, WriterOptions{options.commit_interval});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "glassbox: warning: tracing is off for this run: %s\n", e.what());
    return false;
  }
  DetailPolicy detail;
  if (options.detail) {
    detail = *options.detail;
  } else if (const char* env = std::getenv("GLASSBOX_DETAIL"); env && *env) {
    try {
      detail = DetailPolicy::parse(env);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "glassbox: warning: %s; tracing with the default detail (%s)\n", e.what(),
                   DetailPolicy{}.text().c_str());
    }
  }
  Registry& r = registry();
  r.triggered_kinds.store(0);
  r.error_triggers.store(0);
  r.ring_events.store(options.ring_events);
  r.ring_max_events.store(options.ring_max_events);
  r.on_full.store(static_cast<int>(options.on_full));
  try {
    writer->set_meta("ring_events", std::to_string(options.ring_events));
    writer->set_meta("ring_max_events", std::to_string(options.ring_max_events));
    writer->set_meta("on_full", options.on_full == OnFull::block ? "block" : "drop");
    writer->set_meta("pid", std::to_string(getpid()));
    g_collector = new Collector(std::move(writer), detail);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "glassbox: warning: tracing is off for this run: %s\n", e.what());
    return false;
  }
  g_path = path;
  {
    std::lock_guard detail_lock(g_detail_mu);
    g_detail = detail;
  }
  g_session_thread = pthread_self();
  g_signal_target.store(g_collector);
  install_handler(SIGINT, g_old_int, g_int_installed);
  install_handler(SIGTERM, g_old_term, g_term_installed);
  g_old_terminate = std::set_terminate(on_terminate);
  g_recording.store(true, std::memory_order_release);
  g_span_sinks.fetch_or(kRecordSpans, std::memory_order_release);
  g_collector->start();
  start_gpu_activity(g_collector->clock(), options.gpu_activity);
  for (const SessionHook& h : session_hooks())
    if (h.start) h.start();
  return true;
}

// Under g_session_mu.
static void stop_locked(const std::string& stopped_by) {
  if (!g_collector) return;
  for (const SessionHook& h : session_hooks())
    if (h.stop) h.stop();  // the engine's synchronizes its CUDA devices: their last kernels are in CUPTI's buffers
  stop_gpu_activity();
  g_signal_target.store(nullptr);
  g_collector->stop(stopped_by);
  delete g_collector;
  g_collector = nullptr;
  {
    std::lock_guard detail_lock(g_detail_mu);
    g_detail = DetailPolicy{};
  }
  restore_handler(SIGINT, g_old_int, g_int_installed);
  restore_handler(SIGTERM, g_old_term, g_term_installed);
  if (std::get_terminate() == on_terminate) std::set_terminate(g_old_terminate);
}

void stop_recording(const std::string& stopped_by) {
  std::lock_guard lock(g_session_mu);
  stop_locked(stopped_by);
}

bool stop_recording_within(const std::string& stopped_by, std::chrono::milliseconds wait) {
  const auto deadline = std::chrono::steady_clock::now() + wait;
  std::unique_lock lock(g_session_mu, std::try_to_lock);
  while (!lock.owns_lock()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    lock.try_lock();
  }
  stop_locked(stopped_by);
  return true;
}

std::uint64_t events_written_now() {
  std::lock_guard lock(g_session_mu);
  return g_collector ? g_collector->events_written() : 0;
}

LaunchRank launch_rank(const char* (*get)(const char*)) {
  auto number = [get](const char* name) -> int {
    const char* v = get(name);
    if (!v || !*v) return -1;
    char* end = nullptr;
    const long n = std::strtol(v, &end, 10);
    return *end == '\0' && n >= 0 && n < (1L << 30) ? int(n) : -1;
  };
  const char* const launchers[][3] = {{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
                                      {"PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"},
                                      {"RANK", "WORLD_SIZE", "LOCAL_RANK"}};
  for (const auto& names : launchers) {
    const int rank = number(names[0]), size = number(names[1]);
    if (rank < 0 || size < 2 || rank >= size) continue;
    return LaunchRank{rank, size, number(names[2])};
  }
  return LaunchRank{};
}

std::string rank_trace_path(const std::string& path, int rank) {
  const std::string tag = ".rank" + std::to_string(rank);
  const size_t slash = path.find_last_of('/');
  const size_t dot = path.find_last_of('.');
  const bool has_ext = dot != std::string::npos && (slash == std::string::npos || dot > slash + 1);
  return has_ext ? path.substr(0, dot) + tag + path.substr(dot) : path + tag;
}

namespace {
// GLASSBOX_TRACE=path.db records the whole run. This object lives in the translation unit that every probe
// pulls in (it defines nothing else the probes need, but the Session API and the env session must agree).
// Under a launcher of several ranks (mpirun, ...) each rank records its own file (rank_trace_path) and says which
// rank it is in meta (rank, world_size, local_rank).
struct EnvSession {
  bool on = false;
  EnvSession() {
    const char* path = std::getenv("GLASSBOX_TRACE");
    if (!path || !*path) return;
    const LaunchRank lr = launch_rank([](const char* name) -> const char* { return std::getenv(name); });
    on = start_recording(lr.rank >= 0 ? rank_trace_path(path, lr.rank) : std::string(path), SessionOptions{});
    if (on && lr.rank >= 0) {
      set_meta("rank", std::to_string(lr.rank));
      set_meta("world_size", std::to_string(lr.world_size));
      if (lr.local_rank >= 0) set_meta("local_rank", std::to_string(lr.local_rank));
    }
  }
  ~EnvSession() {
    if (on) stop_recording("exit");
  }
};
EnvSession g_env_session;
}  // namespace

}  // namespace detail

DetailPolicy active_detail() {
  std::lock_guard lock(detail::g_detail_mu);
  return detail::g_detail;
}

Session::Session(const std::string& path, SessionOptions options) : path_(path) {
  owner_ = detail::start_recording(path, options);
}

Session::~Session() { stop(); }

bool Session::active() const { return owner_ && enabled(); }

void Session::stop() {
  if (!owner_) return;
  owner_ = false;
  detail::stop_recording("session end");
}

std::uint64_t Session::events_written() const { return detail::events_written_now(); }

void add_session_hook(void (*start)(), void (*stop)()) {
  std::lock_guard lock(detail::g_session_mu);
  detail::session_hooks().push_back(detail::SessionHook{start, stop});
  if (detail::g_collector && start) start();
}

}  // namespace gb::trace
