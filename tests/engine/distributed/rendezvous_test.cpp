// tests/engine/distributed/rendezvous_test.cpp — engine/distributed/rendezvous.h: rank and size from each launcher's
// variables (and every malformed one named), and rank 0's blob reaching every rank over real TCP sockets on this
// host, in threads: ranks that come before rank 0 listens, a stranger on the port, and each refusal and timeout.
#include "distributed/rendezvous.h"

#include <doctest/doctest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>
#include <map>
#include <string>
#include <thread>

#include "glassbox/core/error.h"

namespace dd = gb::distributed::detail;
using namespace std::chrono_literals;

namespace {

dd::LaunchEnv env_of(const std::map<std::string, std::string>& vars) {
  return dd::read_launch_env(
      [&](const char* name) -> const char* {
        auto it = vars.find(name);
        return it == vars.end() ? nullptr : it->second.c_str();
      },
      "nccl");
}

std::vector<std::uint8_t> blob_of(const std::string& s) { return std::vector<std::uint8_t>(s.begin(), s.end()); }

// A port nothing listens on now (bound, then released).
int free_port() {
  dd::RendezvousServer probe(0);
  return probe.port();
}

}  // namespace

TEST_CASE("rank and size come from RANK/WORLD_SIZE first, then from mpirun's variables") {
  dd::LaunchEnv e = env_of({{"RANK", "2"},
                            {"WORLD_SIZE", "4"},
                            {"MASTER_ADDR", "node7"},
                            {"MASTER_PORT", "29500"},
                            {"LOCAL_RANK", "0"},
                            {"OMPI_COMM_WORLD_RANK", "1"},
                            {"OMPI_COMM_WORLD_SIZE", "2"}});
  CHECK(e.rank == 2);
  CHECK(e.world_size == 4);
  CHECK(e.local_rank == 0);
  CHECK(e.master_addr == "node7");
  CHECK(e.master_port == 29500);
  CHECK(e.source == "RANK/WORLD_SIZE");

  e = env_of({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}});
  CHECK(e.rank == 1);
  CHECK(e.world_size == 2);
  CHECK(e.local_rank == 1);
  CHECK(e.master_addr.empty());
  CHECK(e.master_port == 0);
  CHECK(e.source == "OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE");

  e = env_of({{"PMI_RANK", "3"}, {"PMI_SIZE", "8"}});
  CHECK(e.rank == 3);
  CHECK(e.world_size == 8);
  CHECK_FALSE(e.local_rank.has_value());
  CHECK(e.source == "PMI_RANK/PMI_SIZE");
}

TEST_CASE("a missing or malformed launcher variable is named, with how to start the job") {
  CHECK_THROWS_WITH_AS(env_of({}), doctest::Contains("RANK and WORLD_SIZE not set: start the job with mpirun"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(env_of({{"RANK", "0"}}), doctest::Contains("WORLD_SIZE not set"), gb::Error);
  CHECK_THROWS_WITH_AS(env_of({{"WORLD_SIZE", "2"}}), doctest::Contains("RANK not set"), gb::Error);
  CHECK_THROWS_WITH_AS(env_of({{"RANK", "one"}, {"WORLD_SIZE", "2"}}),
                       doctest::Contains("RANK=\"one\" is not an integer"), gb::Error);
  CHECK_THROWS_WITH_AS(env_of({{"RANK", "0"}, {"WORLD_SIZE", "0"}}),
                       doctest::Contains("WORLD_SIZE=\"0\" is not an integer in [1,"), gb::Error);
  CHECK_THROWS_WITH_AS(env_of({{"RANK", "2"}, {"WORLD_SIZE", "2"}}),
                       doctest::Contains("rank 2 is not below the world size 2"), gb::Error);
  CHECK_THROWS_WITH_AS(env_of({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "70000"}}),
                       doctest::Contains("MASTER_PORT=\"70000\" is not an integer in [1, 65535]"), gb::Error);
}

TEST_CASE("rank 0's blob reaches every rank, also ranks that start before rank 0 listens") {
  const int port = free_port();
  std::string text(128, 'Z');  // an NCCL id's size (appended, not `+`: GCC 12 misreads the latter, bug 105651)
  text += "end";
  const std::vector<std::uint8_t> id = blob_of(text);
  std::vector<std::future<std::vector<std::uint8_t>>> ranks;
  for (int r = 1; r < 4; ++r)
    ranks.push_back(std::async(
        std::launch::async, [=] { return dd::fetch_from_rank0("127.0.0.1", port, r, 4, std::chrono::seconds(20)); }));
  std::this_thread::sleep_for(100ms);  // the ranks retry while nothing listens
  {
    dd::RendezvousServer server(port);
    CHECK(server.port() == port);
    server.serve(4, id, std::chrono::seconds(20));
  }
  for (auto& f : ranks) CHECK(f.get() == id);
}

TEST_CASE("a world of one needs nobody; a stranger on the port is dropped and the ranks still meet") {
  dd::RendezvousServer alone(0);
  alone.serve(1, blob_of("x"), 10ms);  // returns at once

  dd::RendezvousServer server(0);
  const int port = server.port();
  // a program that connects and says something else
  std::thread stranger([port] {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(std::uint16_t(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
      const char junk[] = "GET / HTTP/1.0\r\n\r\n";
      (void)::send(fd, junk, sizeof junk - 1, MSG_NOSIGNAL);
      char sink[64];
      (void)::recv(fd, sink, sizeof sink, 0);
    }
    ::close(fd);
  });
  std::this_thread::sleep_for(50ms);
  auto rank1 = std::async(std::launch::async, [=] { return dd::fetch_from_rank0("localhost", port, 1, 2, 20s); });
  server.serve(2, blob_of("id"), std::chrono::seconds(20));
  CHECK(rank1.get() == blob_of("id"));
  stranger.join();
}

TEST_CASE("refusals reach both sides: another world size, a duplicate rank") {
  {
    dd::RendezvousServer server(0);
    const int port = server.port();
    auto rank1 = std::async(std::launch::async, [=] { return dd::fetch_from_rank0("127.0.0.1", port, 1, 3, 20s); });
    CHECK_THROWS_WITH_AS(server.serve(2, blob_of("id"), 20s),
                         doctest::Contains("rank 1 says WORLD_SIZE is 3 but rank 0's is 2"), gb::Error);
    CHECK_THROWS_WITH_AS(rank1.get(),
                         doctest::Contains("rank 0 refused rank 1: rank 1 says WORLD_SIZE is 3 but rank 0's is 2"),
                         gb::Error);
  }
  {
    dd::RendezvousServer server(0);
    const int port = server.port();
    auto first = std::async(std::launch::async, [=] { return dd::fetch_from_rank0("127.0.0.1", port, 1, 3, 20s); });
    std::this_thread::sleep_for(100ms);
    auto second = std::async(std::launch::async, [=] { return dd::fetch_from_rank0("127.0.0.1", port, 1, 3, 20s); });
    CHECK_THROWS_WITH_AS(server.serve(3, blob_of("id"), 20s),
                         doctest::Contains("two processes say they are rank 1: give each process its own RANK"),
                         gb::Error);
    CHECK_THROWS_WITH_AS(first.get(), doctest::Contains("two processes say they are rank 1"), gb::Error);
    CHECK_THROWS_WITH_AS(second.get(), doctest::Contains("two processes say they are rank 1"), gb::Error);
  }
}

TEST_CASE("nobody waits past the deadline: missing ranks are named, an absent rank 0 too") {
  dd::RendezvousServer server(0);
  const int port = server.port();
  auto rank2 = std::async(std::launch::async, [=] { return dd::fetch_from_rank0("127.0.0.1", port, 2, 4, 20s); });
  const auto t0 = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH_AS(
      server.serve(4, blob_of("id"), 300ms),
      doctest::Contains(("waited 300 ms on port " + std::to_string(port) + " for ranks 1, 3 of 4").c_str()), gb::Error);
  CHECK(std::chrono::steady_clock::now() - t0 < 5s);
  CHECK_THROWS_WITH_AS(rank2.get(), doctest::Contains("rank 0 refused rank 2: rank 0 waited 300 ms"), gb::Error);

  const int nobody = free_port();
  CHECK_THROWS_WITH_AS(dd::fetch_from_rank0("127.0.0.1", nobody, 1, 2, 300ms),
                       doctest::Contains(("rank 1 could not reach rank 0 at 127.0.0.1:" + std::to_string(nobody) +
                                          " within 300 ms (Connection refused)")
                                             .c_str()),
                       gb::Error);
  CHECK_THROWS_WITH_AS(dd::fetch_from_rank0("no-such-host.invalid", 29500, 1, 2, 300ms),
                       doctest::Contains("MASTER_ADDR \"no-such-host.invalid\" does not resolve"), gb::Error);
  // the port taken: rank 0 says so
  CHECK_THROWS_WITH_AS(dd::RendezvousServer{port}, doctest::Contains("could not listen on MASTER_PORT"), gb::Error);
}
