// tests/engine/io/io_test_util.h — helpers shared by the I/O tests: a temp folder, raw file bytes, safetensors files
// (a tensor's values: support/check.h's gbtest::values).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "glassbox/glassbox.h"
#include "support/check.h"

namespace iotest {

// A fresh folder under $TMPDIR, removed with everything in it at the end of the test.
struct TempDir {
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "glassbox-io-XXXXXX").string();
    path = mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string operator/(const std::string& name) const { return path + "/" + name; }
  std::string path;
};

inline std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), std::streamsize(bytes.size()));
}

// A safetensors file from its parts: the 8-byte little-endian length, the header text as given, the data.
inline std::string safetensors_bytes(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[size_t(i)] = char((uint64_t(header.size()) >> (8 * i)) & 0xff);
  return out + header + data;
}

// CRC-32 (zip's, polynomial 0xedb88320) bit by bit, the textbook way: the library's is table-driven.
inline uint32_t crc32(const std::string& s) {
  uint32_t c = 0xffffffffu;
  for (unsigned char b : s) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
  }
  return c ^ 0xffffffffu;
}

}  // namespace iotest
