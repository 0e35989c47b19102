// instrument/session.h — turning tracing on and off.
//
// Contract:
//   - Tracing is off by default. GLASSBOX_TRACE=path.db in the environment records the whole run into path.db
//     (no code change); in code, a gb::trace::Session records from its construction to its destruction.
//     One session at a time: a second one (or a Session while GLASSBOX_TRACE records) throws gb::trace::Error.
//   - If the file cannot be created (bad path, read-only folder), the Session prints one warning line to stderr and
//     records nothing; the program goes on. A write error later (disk full) stops recording the same way and
//     keeps what was written.
//   - The trace is finished (rings drained, meta written, indexes built) when the session ends: its destructor,
//     normal exit (the environment session), an exception that escapes main (std::terminate), SIGINT or SIGTERM
//     (when the program has not installed its own handler; the signal is re-raised afterwards, so the exit status
//     is the usual one). meta stopped_by says which. A SIGKILL loses at most the last ~100 ms.
//   - Rings: ring_events sizes the rings of threads that first trace after the session starts (default 65536
//     events, 4 MiB per thread). While the collector is behind, a thread's full ring grows instead (twice larger
//     each time, up to ring_max_events: default 4 Mi events, 256 MiB) and shrinks back once it has caught up; meta
//     ring_peak_events.thread.N records a thread whose ring grew. Past ring_max_events an event is dropped and
//     counted (meta dropped_events), or, with on_full = OnFull::block, waits (tests that count events).
//   - Detail (instrument/detail.h): every step's summary is written; the detail of the first steps, of a window every
//     N steps, and of the flight recorder's last steps when something goes wrong. SessionOptions::detail, else
//     GLASSBOX_DETAIL, else the defaults; meta `detail` says which (a bad GLASSBOX_DETAIL is one warning line and
//     the defaults).
//   - A signal stops the program promptly however heavy the trace: the thread the signal reaches (and the thread
//     that started the session) wait in the handler while the collector puts what is left in the rings into the
//     flight recorder, writes its last steps and closes the file (at most ~10 s), then the signal is re-raised.
//   - GPU activity: with CUDA, CUPTI records every kernel, copy, memset and CUDA API call on the trace's clock, each
//     kernel joined to the span that launched it (instrument/cupti.h); meta cupti says whether it was on, and why
//     not.
//
//   {
//     gb::trace::Session trace("run.db");
//     train();
//   }  // run.db is complete here
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <optional>

#include "instrument/detail.h"
#include "instrument/probe.h"

namespace gb::trace {

struct SessionOptions {
  OnFull on_full = OnFull::drop;
  std::uint32_t ring_events = 1u << 16;
  std::uint64_t ring_max_events = 1u << 22;  // rounded down to a power of two, at least ring_events
  std::chrono::nanoseconds commit_interval = std::chrono::milliseconds(100);
  // GPU activity through CUPTI (kernels, copies, memsets, CUDA API calls; instrument/cupti.h) in a build with the
  // CUDA toolkit, where a driver is present. GLASSBOX_CUPTI=0 in the environment turns it off too.
  bool gpu_activity = true;
  // Which steps keep their detail; unset: GLASSBOX_DETAIL, else DetailPolicy's defaults.
  std::optional<DetailPolicy> detail{};
};

class Session {
 public:
  explicit Session(const std::string& path, SessionOptions options = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  bool active() const;             // false when the file could not be created, or after stop()
  const std::string& path() const { return path_; }
  void stop();                     // finish the trace now (the destructor does it otherwise)
  std::uint64_t events_written() const;

 private:
  std::string path_;
  bool owner_ = false;  // this Session started the recording
};

namespace detail {
// Starts/stops the process's one recording; used by Session and by the GLASSBOX_TRACE environment session.
bool start_recording(const std::string& path, const SessionOptions& options);
void stop_recording(const std::string& stopped_by);

// One rank of a job of several, as its launcher says in the environment: Open MPI's mpirun
// (OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK), MPICH's and Intel MPI's (PMI_RANK, PMI_SIZE), torchrun-style
// launchers (RANK, WORLD_SIZE, LOCAL_RANK). rank -1: not started as one rank of several (or world size 1).
struct LaunchRank {
  int rank = -1, world_size = 1, local_rank = -1;
};
LaunchRank launch_rank(const char* (*get)(const char*));
// The trace of one rank: GLASSBOX_TRACE=run.db records run.rank<r>.db (the rank before the extension; appended
// when the name has none), so the ranks of a job never write one file.
std::string rank_trace_path(const std::string& path, int rank);
}  // namespace detail

}  // namespace gb::trace
