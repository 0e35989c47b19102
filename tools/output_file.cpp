// tools/output_file.cpp — temp file + rename, with a buffered plain or zlib gzip stream.
#include "tools/output_file.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "traces/error.h"

namespace gb::tools {

namespace {
constexpr std::size_t kBuffer = 1 << 20;
std::string errno_text() { return std::strerror(errno); }
}  // namespace

bool ends_with_gz(std::string_view path) { return path.size() > 3 && path.substr(path.size() - 3) == ".gz"; }

OutputFile::OutputFile(const std::string& path, bool gzip) : path_(path), gzip_(gzip) {
  namespace fs = std::filesystem;
  fs::path p(path);
  fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  std::string hidden = p.filename().string();  // ".NAME.tmp-XXXXXX" (appending: GCC 12 misreads "." + s, -Wrestrict)
  hidden.insert(0, 1, '.');
  hidden += ".tmp-XXXXXX";
  std::string tmpl = (dir / hidden).string();
  int fd = mkstemp(tmpl.data());
  if (fd < 0)
    throw gb::trace::Error("glassbox: cannot write '" + path + "' (" + errno_text() + " in folder '" + dir.string() +
                           "'); check that the folder exists and is writable");
  temp_ = tmpl;
  mode_t mask = umask(0);  // mkstemp makes 0600; give the file the mode a plain open() would
  umask(mask);
  fchmod(fd, 0666 & ~mask);
  if (gzip_) {
    gz_ = gzdopen(fd, "wb6");
    if (!gz_) {
      ::close(fd);
      std::remove(temp_.c_str());
      throw gb::trace::Error("glassbox: cannot start a gzip stream for '" + path + "' (out of memory?)");
    }
  } else {
    file_ = fdopen(fd, "wb");
    if (!file_) {
      ::close(fd);
      std::remove(temp_.c_str());
      throw gb::trace::Error("glassbox: cannot write '" + path + "' (" + errno_text() + ")");
    }
  }
  buffer_.reserve(kBuffer);
}

OutputFile::~OutputFile() {
  if (committed_) return;
  close_handles();
  std::remove(temp_.c_str());
}

void OutputFile::close_handles() {
  if (file_) std::fclose(file_);
  if (gz_) gzclose(static_cast<gzFile>(gz_));
  file_ = nullptr;
  gz_ = nullptr;
}

void OutputFile::write(std::string_view data) {
  buffer_.append(data);
  bytes_in_ += data.size();
  if (buffer_.size() >= kBuffer) flush_buffer();
}

void OutputFile::flush_buffer() {
  if (buffer_.empty()) return;
  bool ok;
  if (gzip_) {
    ok = gzwrite(static_cast<gzFile>(gz_), buffer_.data(), static_cast<unsigned>(buffer_.size())) ==
         static_cast<int>(buffer_.size());
  } else {
    ok = std::fwrite(buffer_.data(), 1, buffer_.size(), file_) == buffer_.size();
  }
  if (!ok) throw gb::trace::Error("glassbox: cannot write '" + path_ + "' (" + errno_text() + "; is the disk full?)");
  buffer_.clear();
}

void OutputFile::commit() {
  flush_buffer();
  int rc;
  if (gzip_) {
    rc = gzclose(static_cast<gzFile>(gz_)) == Z_OK ? 0 : -1;
    gz_ = nullptr;
  } else {
    rc = std::fflush(file_) == 0 ? 0 : -1;
    rc |= std::fclose(file_);
    file_ = nullptr;
  }
  if (rc != 0)
    throw gb::trace::Error("glassbox: cannot finish '" + path_ + "' (" + errno_text() + "; is the disk full?)");
  if (std::rename(temp_.c_str(), path_.c_str()) != 0)
    throw gb::trace::Error("glassbox: cannot rename '" + temp_ + "' to '" + path_ + "' (" + errno_text() + ")");
  committed_ = true;
}

}  // namespace gb::tools
