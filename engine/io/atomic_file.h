// engine/io/atomic_file.h — AtomicFile: a file that appears at its path complete or not at all.
//
//   detail::AtomicFile out(path);      // opens <path>.tmp-<pid> in the same folder
//   out.write(bytes, n); ...           // buffered; a failed write throws
//   out.commit();                      // fflush + fsync + rename over path + fsync of the folder
//
// Any error (and a destructor without commit) removes the temp file; the file at `path` keeps its old bytes.
// Errors are gb::Error naming the path and the system's reason (strerror). Not thread-safe; one writer per path.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>

namespace gb::detail {

class AtomicFile {
 public:
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, size_t n);
  void commit();
  const std::string& temp_path() const { return temp_path_; }

 private:
  [[noreturn]] void fail(const std::string& what, int err);
  void discard() noexcept;

  std::string path_;
  std::string temp_path_;
  std::FILE* file_ = nullptr;
  bool committed_ = false;
};

}  // namespace gb::detail
