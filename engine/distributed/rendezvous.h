// engine/distributed/rendezvous.h — how the ranks of a job find each other (internal to the backends).
//
// Contract:
//   - read_launch_env: this process's rank and the job's size from the launcher's environment: RANK / WORLD_SIZE
//     (torchrun and PyTorch's env:// convention; MASTER_ADDR / MASTER_PORT say where rank 0 listens), else mpirun's
//     OMPI_COMM_WORLD_RANK / OMPI_COMM_WORLD_SIZE (or PMI_RANK / PMI_SIZE, PMIX_RANK with PMI_SIZE). LOCAL_RANK
//     (or OMPI_COMM_WORLD_LOCAL_RANK / MPI_LOCALRANKID) is the rank among this host's processes when the launcher
//     gives it. A gb::Error names the variable that is missing or malformed and how to start the job.
//   - One blob (NCCL's unique id) from rank 0 to every other rank over TCP, as PyTorch's TCPStore carries it:
//     RendezvousServer on rank 0 listens on MASTER_PORT, waits until ranks 1..world_size-1 have all said hello
//     (their rank and world size, checked: a rank out of range, a duplicate rank or another world size is refused
//     with a message sent to that rank as well), then sends each the blob. fetch_from_rank0 on the other ranks
//     connects (retrying while rank 0 is not up yet) and returns the blob. Both give up at the deadline with an
//     error naming who is missing and what to check; nothing blocks past it. The transport of the collectives
//     themselves is never ours: this carries a few bytes once, at init_process_group.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gb::distributed::detail {

struct LaunchEnv {
  int rank = 0;
  int world_size = 1;
  std::optional<int> local_rank;
  std::string master_addr;  // empty when MASTER_ADDR is not set
  int master_port = 0;      // 0 when MASTER_PORT is not set
  std::string source;       // which variables gave rank and size: "RANK/WORLD_SIZE", "OMPI_COMM_WORLD_*", ...
};

// `getenv` is std::getenv in the backends; tests pass a map's lookup.
using EnvLookup = std::function<const char*(const char*)>;
LaunchEnv read_launch_env(const EnvLookup& getenv, const char* backend);

class RendezvousServer {
 public:
  // Listens on `port` of every IPv4 interface (0: a free port, for tests). Throws naming the port when it is taken.
  explicit RendezvousServer(int port);
  ~RendezvousServer();
  RendezvousServer(const RendezvousServer&) = delete;
  RendezvousServer& operator=(const RendezvousServer&) = delete;

  int port() const { return port_; }
  // Rank 0's side: every other rank of a world of `world_size` says hello, then gets `blob`.
  void serve(int world_size, const std::vector<std::uint8_t>& blob, std::chrono::milliseconds timeout);

 private:
  int fd_ = -1;
  int port_ = 0;
};

// Rank `rank`'s side (rank >= 1): the blob rank 0 serves at host:port.
std::vector<std::uint8_t> fetch_from_rank0(const std::string& host, int port, int rank, int world_size,
                                           std::chrono::milliseconds timeout);

}  // namespace gb::distributed::detail
