// glassbox/distributed/distributed.h — torch.distributed's module functions over the default process group.
//
//   gb::distributed::init_process_group("mpi");          // under mpirun: rank and size from MPI
//   auto t = gb::ones({4}) * (gb::distributed::get_rank() + 1);
//   gb::distributed::all_reduce(t);                       // every rank: 1 + 2 + ... + size
//   auto w = gb::distributed::all_reduce(g, gb::distributed::ReduceOp::AVG, /*async_op=*/true);
//   ...                                                   // compute meanwhile
//   w->wait();
//   gb::distributed::destroy_process_group();
//
// Synchronous calls (async_op false) wait before they return and return nullptr, as PyTorch's do; async ones
// return the Work handle. Every function but init_process_group and is_initialized throws gb::Error naming what to
// do when no group is initialised.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "glassbox/distributed/process_group.h"

namespace gb::distributed {

// Starts this process's membership of the default group. backend: "mpi", "nccl", or "" for the first available one.
// MPI: initialises MPI (thread level serialized or better) unless the program did, rank and size from
// MPI_COMM_WORLD (mpirun sets them; a program started without mpirun is a group of one).
// NCCL: one communicator on the current CUDA device (call gb::cuda::set_device(local rank) first when a host has
// several GPUs), rank and size from RANK / WORLD_SIZE, else from mpirun's variables; rank 0's NCCL id reaches the
// others over TCP at MASTER_ADDR:MASTER_PORT when those are set, else through MPI (under mpirun).
// `timeout`: how long a collective may take before wait() throws (PyTorch's default, 30 minutes; on NCCL the
// group's watchdog aborts the communicator then). A backend this build does not have, or one that cannot start, is
// a gb::Error that names it and what to install or set.
void init_process_group(const std::string& backend = "", std::chrono::milliseconds timeout = std::chrono::minutes(30));
bool is_initialized();
// Ends the default group (waits for the collectives in flight; finalises MPI if init_process_group initialised it).
// Also done at exit.
void destroy_process_group();

int get_rank();
int get_world_size();
std::string get_backend();
std::shared_ptr<ProcessGroup> default_group();

std::shared_ptr<Work> all_reduce(const Tensor& tensor, ReduceOp op = ReduceOp::SUM, bool async_op = false);
std::shared_ptr<Work> broadcast(const Tensor& tensor, int64_t src, bool async_op = false);
// tensor_list: resized to get_world_size() tensors shaped like `tensor` when it is empty.
std::shared_ptr<Work> all_gather(std::vector<Tensor>& tensor_list, const Tensor& tensor, bool async_op = false);
std::shared_ptr<Work> reduce_scatter(const Tensor& output, const std::vector<Tensor>& input_list,
                                     ReduceOp op = ReduceOp::SUM, bool async_op = false);
std::shared_ptr<Work> barrier(bool async_op = false);

}  // namespace gb::distributed
