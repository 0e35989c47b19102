// fuzz/input_file.h — the fuzzers' one helper: the input bytes as a file, since the readers under test take paths.
// One file per process and name (libFuzzer runs inputs one after another), rewritten for each input, under
// $TMPDIR/glassbox-fuzz-<pid>/ (which scratch_dir() names); SQLite's -wal and -shm side files of the previous input
// are removed first. `name` may hold sub-folders ("images/a/x.png"): they are made once. read_or_refuse() runs one
// reader and lets a refusal (an exception) pass.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>

namespace gb::fuzz {

inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::filesystem::path d =
        std::filesystem::path(tmp && *tmp ? tmp : "/tmp") / ("glassbox-fuzz-" + std::to_string(getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

inline std::string input_file(const std::uint8_t* data, std::size_t size, const std::string& name) {
  const std::filesystem::path path = scratch_dir() / name;
  std::filesystem::create_directories(path.parent_path());
  std::remove((path.string() + "-wal").c_str());
  std::remove((path.string() + "-shm").c_str());
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) {
    std::perror(path.c_str());
    std::abort();
  }
  if (size && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  return path.string();
}

// Runs one reader on the input: refusing it with an exception (a clear error) is the expected outcome for almost
// every input; anything else it does wrong (a crash, a sanitizer report, a hang, a runaway allocation) ends the run.
template <class Reader>
void read_or_refuse(Reader&& read) {
  try {
    read();
  } catch (const std::exception&) {
  }
}

}  // namespace gb::fuzz
