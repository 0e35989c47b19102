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

// Whether this build has NCCL (GLASSBOX_WITH_NCCL: CUDA and NCCL found), and a group on the current CUDA device
// (rank and size from the launcher's environment, rendezvous.h). Without a usable GPU, or without NCCL in the build,
// a gb::Error says which piece is missing.
bool nccl_built();
std::shared_ptr<ProcessGroup> make_nccl_group(std::chrono::milliseconds timeout);

// Under mpirun: rank `root`'s bytes into every rank's `bytes` (same size everywhere) over MPI_COMM_WORLD, MPI
// initialised as make_mpi_group does. How the NCCL backend hands out its id when MASTER_ADDR is not set.
void mpi_broadcast_bytes(std::vector<unsigned char>& bytes, int root);

// The device a group's collectives take their tensors on: the CPU for MPI, the communicator's GPU for NCCL.
Device group_device(const ProcessGroup& group);

// The checks of a collective's tensors, on the caller's thread: one tensor, defined, CPU, contiguous, a dtype in
// `dtypes`; a gb::Error names the collective, what it got and what to do.
void check_one_tensor(const std::vector<Tensor>& tensors, const char* op);
void check_tensor(const Tensor& t, const char* op, const char* what);
void check_same_layout(const Tensor& t, const Tensor& like, const char* op, const char* what);
// AVG divides: a gb::Error for an integer or bool dtype, naming the collective and what to do instead.
void check_avg_dtype(ScalarType t, const char* op);
// "1000 x float32": a collective's tensor in its Work's description.
std::string describe_tensor(const Tensor& t);

}  // namespace gb::distributed::detail
