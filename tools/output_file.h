// tools/output_file.h — an output file that appears whole or not at all, optionally gzip-compressed.
//
// Contract:
//   - OutputFile(path, gzip) creates a temporary file beside `path` (same folder, so the final rename is atomic);
//     it throws gb::trace::Error naming the folder when that fails.
//   - write() buffers and writes through (plain, or gzip via zlib); any write error throws gb::trace::Error.
//   - commit() flushes, closes and renames the temporary file onto `path`. Until then `path` is untouched; the
//     destructor of an uncommitted OutputFile (an exception, an early return) removes the temporary file, so a
//     failure never leaves half a file.
//
//   OutputFile f("trace.json.gz", /*gzip=*/true);
//   f.write("{...}");
//   f.commit();
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace gb::tools {

class OutputFile {
 public:
  OutputFile(const std::string& path, bool gzip);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void write(std::string_view data);
  void commit();
  const std::string& temp_path() const { return temp_; }
  std::size_t bytes_in() const { return bytes_in_; }  // uncompressed bytes written so far

 private:
  void flush_buffer();
  void close_handles();
  std::string path_, temp_;
  bool gzip_ = false;
  std::FILE* file_ = nullptr;
  void* gz_ = nullptr;  // gzFile
  std::string buffer_;
  std::size_t bytes_in_ = 0;
  bool committed_ = false;
};

bool ends_with_gz(std::string_view path);  // "x.json.gz" -> true

}  // namespace gb::tools
