// engine/io/zip_reader.h — ZipReader: the entries of a zip archive that stores them uncompressed (what torch.save
// writes). Reads the end-of-central-directory record, the central directory and each entry's local header; an
// entry's bytes are read on demand, straight into the caller's memory.
//
// Each entry read whole is checked against its CRC-32 (as PyTorch's reader does), so a flipped byte in a tensor is
// an error rather than a silently wrong weight.
//
// Refused with a gb::Error naming the file and entry: reading a compressed entry (one can be listed: libtorch
// deflates its archives' code/ files, which glassbox never reads), encrypted entries, ZIP64 archives that need
// their 64-bit fields (> 4 GiB or > 65535 entries; a ZIP64 record that repeats the 32-bit values, which PyTorch's
// writer always adds, is fine), multi-disk archives, and any size or offset outside the file.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace gb::detail {

// CRC-32 with the zip polynomial (what each entry's header records).
uint32_t crc32(const unsigned char* p, uint64_t n);

class ZipReader {
 public:
  struct Entry {
    std::string name;
    uint64_t offset = 0;  // of the data, in the file
    uint64_t size = 0;
    uint32_t crc32 = 0;   // from the central directory; checked whenever the whole entry is read
    uint32_t method = 0;  // 0: stored; anything else (a compressed entry) is refused when read
  };

  explicit ZipReader(const std::string& path);  // `what` in messages is "gb::load_pt"
  ~ZipReader();
  ZipReader(const ZipReader&) = delete;
  ZipReader& operator=(const ZipReader&) = delete;

  const std::vector<Entry>& entries() const { return entries_; }
  const Entry* find(const std::string& name) const;
  std::string read(const Entry& e) const;
  void read_into(const Entry& e, void* out, uint64_t n) const;  // the first n (<= e.size) bytes

 private:
  [[noreturn]] void bad(const std::string& problem) const;
  void read_at(uint64_t at, void* out, uint64_t n) const;
  void check_crc(const Entry& e, const void* data) const;
  void check_stored(const Entry& e) const;

  std::string path_;
  std::FILE* file_ = nullptr;
  uint64_t size_ = 0;
  std::vector<Entry> entries_;
};

}  // namespace gb::detail
