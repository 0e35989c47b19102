// engine/distributed/rendezvous.cpp — the launcher's environment, and rank 0's blob over TCP (contract in
// rendezvous.h).
//
// Wire format (all integers little-endian uint32): a rank sends hello = magic "GBRZ", version 1, rank, world size;
// rank 0 answers status (0 ok, 1 refused), length, then that many bytes (the blob, or the reason it was refused).
#include "distributed/rendezvous.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>

#include "glassbox/core/error.h"

namespace gb::distributed::detail {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::uint32_t kMagic = 0x5A524247;  // "GBRZ" little-endian
constexpr std::uint32_t kVersion = 1;
constexpr std::uint32_t kMaxBlob = 1 << 20;

// ---- the environment ----

std::optional<long> parse_int(const EnvLookup& getenv, const char* name, const char* backend, long lo, long hi) {
  const char* v = getenv(name);
  if (!v || !*v) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long x = std::strtol(v, &end, 10);
  GB_CHECK(errno == 0 && end && *end == '\0' && x >= lo && x <= hi, "gb::distributed::init_process_group(\"", backend,
           "\"): environment variable ", name, "=\"", v, "\" is not an integer in [", lo, ", ", hi, "]");
  return x;
}

// ---- sockets ----

struct Fd {
  int fd = -1;
  explicit Fd(int f = -1) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(Fd&& o) noexcept : fd(o.fd) { o.fd = -1; }
  Fd& operator=(Fd&& o) noexcept {
    std::swap(fd, o.fd);
    return *this;
  }
};

int ms_left(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : int(std::min<long long>(left, 1 << 30));
}

// Waits for `events` on fd until the deadline: false on timeout.
bool wait_for(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int rc = ::poll(&p, 1, ms_left(deadline));
    if (rc > 0) return true;
    if (rc == 0) return false;
    if (errno != EINTR) return false;
  }
}

// Reads exactly n bytes before the deadline; false when the peer closed, failed or the deadline passed.
bool read_all(int fd, void* out, size_t n, Clock::time_point deadline) {
  auto* p = static_cast<unsigned char*>(out);
  while (n > 0) {
    if (!wait_for(fd, POLLIN, deadline)) return false;
    const ssize_t got = ::recv(fd, p, n, 0);
    if (got == 0) return false;
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      return false;
    }
    p += got;
    n -= size_t(got);
  }
  return true;
}

bool write_all(int fd, const void* data, size_t n, Clock::time_point deadline) {
  const auto* p = static_cast<const unsigned char*>(data);
  while (n > 0) {
    if (!wait_for(fd, POLLOUT, deadline)) return false;
    const ssize_t sent = ::send(fd, p, n, MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      return false;
    }
    p += sent;
    n -= size_t(sent);
  }
  return true;
}

void put_u32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(std::uint8_t(v >> (8 * i)));
}
std::uint32_t get_u32(const std::uint8_t* p) {
  return std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16 | std::uint32_t(p[3]) << 24;
}

bool send_reply(int fd, std::uint32_t status, const std::uint8_t* bytes, size_t n, Clock::time_point deadline) {
  std::vector<std::uint8_t> msg;
  put_u32(msg, status);
  put_u32(msg, std::uint32_t(n));
  msg.insert(msg.end(), bytes, bytes + n);
  return write_all(fd, msg.data(), msg.size(), deadline);
}
bool send_refusal(int fd, const std::string& why, Clock::time_point deadline) {
  return send_reply(fd, 1, reinterpret_cast<const std::uint8_t*>(why.data()), why.size(), deadline);
}

std::string where(const std::string& host, int port) { return gb::detail::str_cat(host, ":", port); }

// One connection attempt to host:port, bounded by the deadline; an Fd of -1 when refused or unreachable (`why`).
Fd try_connect(const std::string& host, int port, Clock::time_point deadline, std::string& why) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const std::string service = std::to_string(port);
  const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &res);
  if (rc != 0) {
    why = gb::detail::str_cat("MASTER_ADDR \"", host, "\" does not resolve (", ::gai_strerror(rc), ")");
    return Fd();
  }
  Fd s(::socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, res->ai_protocol));
  if (s.fd < 0) {
    why = std::strerror(errno);
    ::freeaddrinfo(res);
    return Fd();
  }
  int r = ::connect(s.fd, res->ai_addr, res->ai_addrlen);
  ::freeaddrinfo(res);
  if (r != 0 && errno != EINPROGRESS) {
    why = std::strerror(errno);
    return Fd();
  }
  if (r != 0) {
    if (!wait_for(s.fd, POLLOUT, deadline)) {
      why = "connection timed out";
      return Fd();
    }
    int err = 0;
    socklen_t len = sizeof err;
    ::getsockopt(s.fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) {
      why = std::strerror(err);
      return Fd();
    }
  }
  return s;
}

std::string rank_list(const std::vector<int>& ranks) {
  std::string out;
  size_t shown = 0;
  for (int r : ranks) {
    if (shown++ == 16) {
      out += gb::detail::str_cat(" and ", ranks.size() - 16, " more");
      break;
    }
    out += gb::detail::str_cat(out.empty() ? "" : ", ", r);
  }
  return out;
}

}  // namespace

LaunchEnv read_launch_env(const EnvLookup& getenv, const char* backend) {
  constexpr long kMaxRanks = 1 << 20;
  LaunchEnv env;
  auto rank = parse_int(getenv, "RANK", backend, 0, kMaxRanks);
  auto world = parse_int(getenv, "WORLD_SIZE", backend, 1, kMaxRanks);
  env.source = "RANK/WORLD_SIZE";
  const std::pair<const char*, const char*> launchers[] = {
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"}, {"PMI_RANK", "PMI_SIZE"}, {"PMIX_RANK", "PMI_SIZE"}};
  for (const auto& [r, w] : launchers) {
    if (rank || world) break;
    rank = parse_int(getenv, r, backend, 0, kMaxRanks);
    world = parse_int(getenv, w, backend, 1, kMaxRanks);
    env.source = gb::detail::str_cat(r, "/", w);
  }
  GB_CHECK(rank && world, "gb::distributed::init_process_group(\"", backend, "\"): ",
           rank    ? "WORLD_SIZE"
           : world ? "RANK"
                   : "RANK and WORLD_SIZE",
           " not set: start the job with mpirun "
           "(mpirun -np 2 ./program) or set RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT in every process "
           "(RANK=0 WORLD_SIZE=1 for a single process)");
  GB_CHECK(*rank < *world, "gb::distributed::init_process_group(\"", backend, "\"): rank ", *rank,
           " is not below the world size ", *world, " (", env.source, ")");
  env.rank = int(*rank);
  env.world_size = int(*world);
  for (const char* name : {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID"})
    if (auto l = parse_int(getenv, name, backend, 0, kMaxRanks)) {
      env.local_rank = int(*l);
      break;
    }
  if (const char* a = getenv("MASTER_ADDR")) env.master_addr = a;
  if (auto p = parse_int(getenv, "MASTER_PORT", backend, 1, 65535)) env.master_port = int(*p);
  return env;
}

RendezvousServer::RendezvousServer(int port) {
  Fd s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  GB_CHECK(s.fd >= 0, "gb::distributed: rank 0 could not open a socket: ", std::strerror(errno));
  const int one = 1;
  ::setsockopt(s.fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = htons(std::uint16_t(port));
  GB_CHECK(::bind(s.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0, "gb::distributed: rank 0 could not ",
           "listen on MASTER_PORT ", port, ": ", std::strerror(errno),
           " (another job or program uses that port: pick a free MASTER_PORT for every rank)");
  GB_CHECK(::listen(s.fd, 128) == 0, "gb::distributed: rank 0 could not listen on port ", port, ": ",
           std::strerror(errno));
  socklen_t len = sizeof addr;
  ::getsockname(s.fd, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  fd_ = s.fd;
  s.fd = -1;
}

RendezvousServer::~RendezvousServer() {
  if (fd_ >= 0) ::close(fd_);
}

void RendezvousServer::serve(int world_size, const std::vector<std::uint8_t>& blob, std::chrono::milliseconds timeout) {
  GB_CHECK(blob.size() <= kMaxBlob, "gb::distributed: the rendezvous carries at most ", kMaxBlob, " bytes");
  const Clock::time_point deadline = Clock::now() + timeout;
  std::map<int, Fd> peers;  // rank -> its connection, once it said hello
  std::string refused;      // the first refusal: every rank connected so far hears it, then rank 0 throws
  while (int(peers.size()) < world_size - 1 && refused.empty()) {
    if (!wait_for(fd_, POLLIN, deadline)) break;
    Fd c(::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (c.fd < 0) continue;
    std::uint8_t hello[16];
    // A connection that says nothing for 5 s (a port scanner, another program) is dropped, not waited on.
    if (!read_all(c.fd, hello, sizeof hello, std::min(deadline, Clock::now() + std::chrono::seconds(5)))) continue;
    if (get_u32(hello) != kMagic || get_u32(hello + 4) != kVersion) {
      // not a glassbox rank of this version: told if it listens, otherwise ignored
      send_refusal(c.fd, "this is a glassbox rendezvous of another version, or not one", deadline);
      continue;
    }
    const int rank = int(get_u32(hello + 8)), world = int(get_u32(hello + 12));
    std::string why;
    if (world != world_size)
      why = gb::detail::str_cat("rank ", rank, " says WORLD_SIZE is ", world, " but rank 0's is ", world_size,
                                ": start every rank with the same WORLD_SIZE");
    else if (rank <= 0 || rank >= world_size)
      why = gb::detail::str_cat("a process with RANK ", rank, " connected; the ranks of a world of ", world_size,
                                " other than rank 0 are 1..", world_size - 1);
    else if (peers.count(rank))
      why = gb::detail::str_cat("two processes say they are rank ", rank, ": give each process its own RANK");
    if (!why.empty()) {
      send_refusal(c.fd, why, deadline);
      refused = why;
      break;
    }
    peers.emplace(rank, std::move(c));
  }
  if (refused.empty() && int(peers.size()) == world_size - 1) {
    for (auto& [rank, c] : peers)
      if (!send_reply(c.fd, 0, blob.data(), blob.size(), deadline))
        throw Error(gb::detail::str_cat("gb::distributed: rank 0 could not send the rendezvous to rank ", rank,
                                        " (it closed its connection: read its output)"));
    return;
  }
  std::string message = refused;
  if (message.empty()) {
    std::vector<int> missing;
    for (int r = 1; r < world_size; ++r)
      if (!peers.count(r)) missing.push_back(r);
    message = gb::detail::str_cat(
        "rank 0 waited ", timeout.count(), " ms on port ", port_, " for ranks ", rank_list(missing), " of ", world_size,
        " and they did not connect: check that every rank started, with the same MASTER_ADDR (this "
        "host's address), MASTER_PORT and WORLD_SIZE, and that no firewall blocks the port");
  }
  for (auto& [rank, c] : peers) send_refusal(c.fd, message, std::min(deadline, Clock::now() + std::chrono::seconds(1)));
  throw Error("gb::distributed::init_process_group: " + message);
}

std::vector<std::uint8_t> fetch_from_rank0(const std::string& host, int port, int rank, int world_size,
                                           std::chrono::milliseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  std::string why;
  Fd s;
  // rank 0 may start after this rank: retry until it listens
  for (auto pause = std::chrono::milliseconds(10);; pause = std::min(pause * 2, std::chrono::milliseconds(500))) {
    s = try_connect(host, port, deadline, why);
    if (s.fd >= 0 || Clock::now() + pause >= deadline) break;
    std::this_thread::sleep_for(pause);
  }
  GB_CHECK(s.fd >= 0, "gb::distributed::init_process_group: rank ", rank, " could not reach rank 0 at ",
           where(host, port), " within ", timeout.count(), " ms (", why,
           "): check that rank 0 is running and that MASTER_ADDR and MASTER_PORT name its host and a port it can "
           "listen on");
  std::vector<std::uint8_t> hello;
  for (std::uint32_t v : {kMagic, kVersion, std::uint32_t(rank), std::uint32_t(world_size)}) put_u32(hello, v);
  std::uint8_t head[8];
  const bool talked = write_all(s.fd, hello.data(), hello.size(), deadline) && read_all(s.fd, head, 8, deadline);
  GB_CHECK(talked, "gb::distributed::init_process_group: rank ", rank, " reached ", where(host, port),
           " but got no answer within ", timeout.count(), " ms: rank 0 may still be waiting for other ranks (all ",
           world_size, " must start), or the port belongs to another program");
  const std::uint32_t status = get_u32(head), n = get_u32(head + 4);
  GB_CHECK(n <= kMaxBlob, "gb::distributed::init_process_group: rank ", rank, ": ", where(host, port),
           " answered with a malformed rendezvous (is MASTER_PORT another program's port?)");
  std::vector<std::uint8_t> body(n);
  GB_CHECK(n == 0 || read_all(s.fd, body.data(), n, deadline), "gb::distributed::init_process_group: rank ", rank,
           ": the answer from rank 0 at ", where(host, port), " was cut short");
  if (status != 0)
    throw Error(gb::detail::str_cat("gb::distributed::init_process_group: rank 0 refused rank ", rank, ": ",
                                    std::string(body.begin(), body.end())));
  return body;
}

}  // namespace gb::distributed::detail
