// engine/io/zip_writer.h — ZipWriter: a zip archive of stored (uncompressed) entries, written front to back into a
// sink, each entry's data aligned to 64 bytes as PyTorch's writer does (the padding is an extra field "FB"), so a
// reader can map tensors straight from the file. What ZipReader and libtorch's reader read.
//
// Archives over 4 GiB (or over 65535 entries), which need ZIP64, are refused with a gb::Error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace gb::detail {

class ZipWriter {
 public:
  using Sink = std::function<void(const void* data, size_t n)>;
  explicit ZipWriter(Sink sink) : sink_(std::move(sink)) {}

  void add(const std::string& name, const void* data, size_t n);
  void add(const std::string& name, const std::string& bytes) { add(name, bytes.data(), bytes.size()); }
  // The central directory and the end record; nothing can be added after.
  void finish();

 private:
  struct Record {
    std::string name;
    uint32_t crc, size, offset;
  };
  void put(const void* data, size_t n);
  Sink sink_;
  uint64_t at_ = 0;
  std::vector<Record> records_;
  bool finished_ = false;
};

}  // namespace gb::detail
