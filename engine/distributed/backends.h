// engine/distributed/backends.h — the backends' factories (internal), and the checks every backend makes of the
// tensors it is handed.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "glassbox/distributed/process_group.h"

namespace gb::distributed::detail {

// Whether this build has MPI (GLASSBOX_WITH_MPI), and a group over MPI_COMM_WORLD (a gb::Error naming what to
// install when it does not, or naming MPI's message when MPI cannot start).
bool mpi_built();
std::shared_ptr<ProcessGroup> make_mpi_group(std::chrono::milliseconds timeout);

// The checks of a collective's tensors, on the caller's thread: one tensor, defined, CPU, contiguous, a dtype in
// `dtypes`; a gb::Error names the collective, what it got and what to do.
void check_one_tensor(const std::vector<Tensor>& tensors, const char* op);
void check_tensor(const Tensor& t, const char* op, const char* what);
void check_same_layout(const Tensor& t, const Tensor& like, const char* op, const char* what);

}  // namespace gb::distributed::detail
