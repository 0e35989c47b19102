// tests/engine/distributed/mpi_group.h — what the MPI tests share: whether this build has the MPI backend, and the
// one default group a test executable starts (MPI starts once per process; the group ends at exit).
#pragma once

#include <algorithm>
#include <chrono>
#include <string>

#include "support/check.h"

namespace gbtest {

inline bool mpi_built() {
  const auto built = gb::distributed::available_backends();
  return std::find(built.begin(), built.end(), "mpi") != built.end();
}

// Starts the default group unless the build has no MPI: then the case is skipped, saying so (`make test-options`
// builds without it).
inline bool ensure_mpi_group(std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
  if (!mpi_built()) {
    MESSAGE("this build has no MPI backend: not run here");
    return false;
  }
  if (!gb::distributed::is_initialized()) gb::distributed::init_process_group("mpi", timeout);
  return true;
}

}  // namespace gbtest
