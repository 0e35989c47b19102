// engine/io/atomic_file.cpp — write to a temp file beside the target, fsync, rename, fsync the folder.
#include "io/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "glassbox/core/error.h"

namespace gb::detail {
namespace {

std::string folder_of(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  GB_CHECK(!path_.empty() && path_.back() != '/', "gb::save: '", path_, "' is not a file path; pass a file name such "
           "as model.safetensors");
  temp_path_ = path_ + ".tmp-" + std::to_string(::getpid());
  file_ = std::fopen(temp_path_.c_str(), "wb");
  if (file_ == nullptr) {
    int err = errno;
    throw Error(str_cat("gb::save: cannot write '", path_, "': creating the temp file '", temp_path_, "' failed (",
                        std::strerror(err), "); check that the folder '", folder_of(path_),
                        "' exists and is writable"));
  }
}

AtomicFile::~AtomicFile() {
  if (!committed_) discard();
}

void AtomicFile::discard() noexcept {
  if (file_ != nullptr) std::fclose(file_);
  file_ = nullptr;
  if (!temp_path_.empty()) ::unlink(temp_path_.c_str());
}

void AtomicFile::fail(const std::string& what, int err) {
  discard();
  throw Error(str_cat("gb::save: cannot write '", path_, "': ", what, " failed (", std::strerror(err),
                      "); the previous file (if any) is unchanged. ",
                      err == ENOSPC || err == EDQUOT ? "Free disk space or save elsewhere"
                                                     : "Check the folder's permissions and free space",
                      ", then save again"));
}

void AtomicFile::write(const void* data, size_t n) {
  GB_ASSERT(file_ != nullptr && !committed_, "AtomicFile::write after commit");
  if (n == 0) return;
  if (std::fwrite(data, 1, n, file_) != n) fail("writing " + temp_path_, errno != 0 ? errno : EIO);
}

void AtomicFile::commit() {
  GB_ASSERT(file_ != nullptr && !committed_, "AtomicFile::commit twice");
  errno = 0;
  if (std::fflush(file_) != 0) fail("writing " + temp_path_, errno != 0 ? errno : EIO);
  if (::fsync(::fileno(file_)) != 0) fail("fsync of " + temp_path_, errno);
  std::FILE* f = file_;
  file_ = nullptr;
  if (std::fclose(f) != 0) fail("closing " + temp_path_, errno != 0 ? errno : EIO);
  if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) fail("renaming " + temp_path_ + " over it", errno);
  committed_ = true;
  // The rename is durable once the folder's entry is on disk; a folder that cannot be opened (some filesystems)
  // still has the complete file, so this last step is best effort.
  int dir = ::open(folder_of(path_).c_str(), O_RDONLY | O_DIRECTORY);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

}  // namespace gb::detail
