// tests/engine/io/atomic_file_test.cpp — AtomicFile and gb::save's crash safety: a SIGKILL in the middle of a
// 200 MB save leaves the previous checkpoint loadable; a failed write (file size limit, missing or unwritable
// folder) throws gb::Error naming the path and the reason, and leaves neither a temp file nor a changed target.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "engine/io/io_test_util.h"
#include "io/atomic_file.h"

using iotest::TempDir;
using gbtest::values;

namespace {

gb::StateDict small_dict(float v) {
  gb::StateDict sd;
  sd.insert("w", gb::full({4}, v));
  return sd;
}

size_t file_count(const std::string& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

}  // namespace

TEST_CASE("commit publishes the bytes; no commit leaves the old file") {
  TempDir dir;
  std::string path = dir / "f.bin";
  {
    gb::detail::AtomicFile f(path);
    CHECK(f.temp_path() == path + ".tmp-" + std::to_string(getpid()));
    f.write("hello", 5);
    CHECK(std::filesystem::exists(f.temp_path()));
    CHECK(!std::filesystem::exists(path));  // nothing at the target until commit
    f.commit();
  }
  CHECK(iotest::read_bytes(path) == "hello");
  CHECK(file_count(dir.path) == 1);
  {
    gb::detail::AtomicFile f(path);
    f.write("other bytes", 11);
  }  // destroyed without commit: the temp file goes, the target keeps its bytes
  CHECK(iotest::read_bytes(path) == "hello");
  CHECK(file_count(dir.path) == 1);
}

TEST_CASE("a missing or unwritable folder is an error naming the path and the reason") {
  TempDir dir;
  std::string missing = dir / "no/such/folder/m.safetensors";
  CHECK_THROWS_WITH_AS(gb::save(small_dict(1), missing),
                       doctest::Contains(("cannot write '" + missing + "'").c_str()), gb::Error);
  CHECK_THROWS_WITH_AS(gb::save(small_dict(1), missing), doctest::Contains("No such file or directory"), gb::Error);
  iotest::write_bytes(dir / "plain", "x");
  CHECK_THROWS_WITH_AS(gb::save(small_dict(1), dir / "plain/m.safetensors"), doctest::Contains("Not a directory"),
                       gb::Error);
  // An unwritable folder: a read-only one for an ordinary user; root writes anywhere but in /sys (sysfs refuses to
  // create files, or is mounted read-only).
  std::string target = dir / "ro/m.safetensors";
  if (geteuid() != 0) {
    std::filesystem::create_directory(dir / "ro");
    chmod((dir / "ro").c_str(), 0555);
  } else {
    target = "/sys/glassbox-io-test.safetensors";
  }
  std::string msg;
  try {
    gb::save(small_dict(1), target);
  } catch (const gb::Error& e) {
    msg = e.what();
  }
  CHECK(msg.find("cannot write '" + target + "'") != std::string::npos);
  CHECK_MESSAGE((msg.find("Permission denied") != std::string::npos ||
                 msg.find("Read-only file system") != std::string::npos), msg);
  CHECK(msg.find("check that the folder") != std::string::npos);
  if (geteuid() != 0) chmod((dir / "ro").c_str(), 0755);
}

TEST_CASE("a write that fails part way (file size limit) throws and keeps the previous file") {
  TempDir dir;
  std::string path = dir / "ckpt.safetensors";
  gb::save(small_dict(3), path);
  // In a child: a 64 KiB file size limit makes the 4 MB save fail in fwrite/fflush with EFBIG, as a full disk
  // fails with ENOSPC.
  gb::StateDict big;  // made before fork: the child only writes
  big.insert("w", gb::zeros({1 << 20}));
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim {65536, 65536};
    setrlimit(RLIMIT_FSIZE, &lim);
    try {
      gb::save(big, path);
    } catch (const gb::Error& e) {
      std::string msg = e.what();
      bool named = msg.find("cannot write '" + path + "'") != std::string::npos &&
                   msg.find("File too large") != std::string::npos && msg.find("unchanged") != std::string::npos;
      _exit(named ? 0 : 2);
    }
    _exit(1);
  }
  int status = 0;
  waitpid(child, &status, 0);
  REQUIRE(WIFEXITED(status));
  CHECK_MESSAGE(WEXITSTATUS(status) == 0, "1: the save succeeded; 2: the message lacked the path or the reason");
  CHECK(values(gb::load(path)["w"]) == std::vector<double>{3, 3, 3, 3});
  CHECK(file_count(dir.path) == 1);  // the temp file was removed
}

TEST_CASE("SIGKILL in the middle of a 200 MB save leaves the previous checkpoint intact") {
  TempDir dir;
  std::string path = dir / "ckpt.safetensors";
  gb::save(small_dict(7), path);
  std::string before = iotest::read_bytes(path);

  gb::StateDict big;
  for (int i = 0; i < 50; ++i) big.insert("layer" + std::to_string(i), gb::full({1 << 20}, float(i)));  // 50 x 4 MB
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    gb::save(big, path);
    _exit(0);
  }
  std::string temp = path + ".tmp-" + std::to_string(child);
  bool killed_mid_write = false;
  for (int i = 0; i < 200000; ++i) {
    struct stat st {};
    if (stat(temp.c_str(), &st) == 0 && st.st_size > (8 << 20)) {
      kill(child, SIGKILL);
      killed_mid_write = true;
      break;
    }
    int status = 0;
    if (waitpid(child, &status, WNOHANG) == child) break;  // finished before we saw it grow (should not happen)
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  int status = 0;
  waitpid(child, &status, 0);
  REQUIRE_MESSAGE(killed_mid_write, "the child finished its 200 MB save before it could be killed");
  CHECK(WIFSIGNALED(status));
  CHECK(iotest::read_bytes(path) == before);
  gb::StateDict back = gb::load(path);
  CHECK(back.keys() == std::vector<std::string>{"w"});
  CHECK(values(back["w"]) == std::vector<double>{7, 7, 7, 7});
  // The half-written temp file is left by the killed process under its own name, and is not a valid file.
  CHECK(std::filesystem::exists(temp));
  CHECK_THROWS_AS(gb::load(temp), gb::Error);
  // The next save over it works.
  gb::save(small_dict(8), path);
  CHECK(values(gb::load(path)["w"]) == std::vector<double>{8, 8, 8, 8});
}
