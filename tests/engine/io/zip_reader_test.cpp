// tests/engine/io/zip_reader_test.cpp — ZipReader on zips built byte by byte here: stored entries with local extra
// fields (as PyTorch pads them), and the refusals (compressed, encrypted, ZIP64 sentinels, no end record, damaged
// offsets, every truncation).
#include <doctest/doctest.h>

#include "engine/io/io_test_util.h"
#include "io/zip_reader.h"

using gb::detail::ZipReader;
using iotest::TempDir;

namespace {

struct Item {
  std::string name, data;
  uint16_t method = 0, flags = 0;
  uint32_t size_field = 0xfffffffe;  // the sizes written; 0xfffffffe means data.size()
};

void put16(std::string& s, uint32_t v) {
  s += char(v & 0xff);
  s += char((v >> 8) & 0xff);
}
void put32(std::string& s, uint32_t v) {
  put16(s, v & 0xffff);
  put16(s, v >> 16);
}

std::string make_zip(const std::vector<Item>& items, uint32_t total_override = 0xfffe) {
  std::string out, cd;
  for (const auto& it : items) {
    uint32_t offset = uint32_t(out.size());
    uint32_t size = it.size_field == 0xfffffffe ? uint32_t(it.data.size()) : it.size_field;
    std::string extra(5, 'F');  // PyTorch pads local headers so data starts aligned
    put32(out, 0x04034b50);
    put16(out, 20);
    put16(out, it.flags);
    put16(out, it.method);
    put32(out, 0);  // time, date
    put32(out, iotest::crc32(it.data));
    put32(out, size);
    put32(out, size);
    put16(out, uint32_t(it.name.size()));
    put16(out, uint32_t(extra.size()));
    out += it.name + extra + it.data;
    put32(cd, 0x02014b50);
    put16(cd, 20);
    put16(cd, 20);
    put16(cd, it.flags);
    put16(cd, it.method);
    put32(cd, 0);
    put32(cd, iotest::crc32(it.data));
    put32(cd, size);
    put32(cd, size);
    put16(cd, uint32_t(it.name.size()));
    put16(cd, 0);
    put16(cd, 0);
    put16(cd, 0);
    put16(cd, 0);
    put32(cd, 0);
    put32(cd, offset);
    cd += it.name;
  }
  uint32_t cd_offset = uint32_t(out.size());
  out += cd;
  uint32_t n = total_override == 0xfffe ? uint32_t(items.size()) : total_override;
  put32(out, 0x06054b50);
  put16(out, 0);
  put16(out, 0);
  put16(out, n);
  put16(out, n);
  put32(out, uint32_t(cd.size()));
  put32(out, cd_offset);
  put16(out, 0);
  return out;
}

std::string error_of(const TempDir& dir, const std::string& bytes) {
  iotest::write_bytes(dir / "z.zip", bytes);
  try {
    ZipReader z(dir / "z.zip");
  } catch (const gb::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("stored entries are found and read, extra fields skipped") {
  TempDir dir;
  iotest::write_bytes(dir / "a.zip", make_zip({{"archive/data.pkl", "PICKLE"}, {"archive/data/0", "0123456789"},
                                               {"archive/empty", ""}}));
  ZipReader z(dir / "a.zip");
  REQUIRE(z.entries().size() == 3);
  CHECK(z.entries()[1].name == "archive/data/0");
  CHECK(z.read(*z.find("archive/data.pkl")) == "PICKLE");
  CHECK(z.read(*z.find("archive/empty")).empty());
  char buf[4];
  z.read_into(*z.find("archive/data/0"), buf, 4);
  CHECK(std::string(buf, 4) == "0123");
  CHECK(z.find("archive/missing") == nullptr);
  CHECK(iotest::crc32("123456789") == 0xcbf43926u);  // the CRC-32 check value

  // A changed byte fails the entry's CRC when it is read.
  std::string bytes = make_zip({{"archive/data/0", "0123456789"}});
  bytes[30 + 14 + 5 + 3] ^= 1;  // local header, name, extra, then the 4th data byte
  iotest::write_bytes(dir / "b.zip", bytes);
  ZipReader damaged(dir / "b.zip");
  CHECK_THROWS_WITH_AS(damaged.read(damaged.entries()[0]),
                       doctest::Contains("entry 'archive/data/0' fails its CRC-32 check"), gb::Error);
  std::string part(3, '\0');
  damaged.read_into(damaged.entries()[0], part.data(), 3);  // a prefix is not checked (nor changed)
  CHECK(part == "012");
}

TEST_CASE("what it cannot read, it names") {
  TempDir dir;
  iotest::write_bytes(dir / "deflated.zip", make_zip({{"a", "xyz", 8}, {"b", "stored"}}));
  ZipReader deflated(dir / "deflated.zip");  // listed (libtorch deflates code/ files), refused when read
  REQUIRE(deflated.entries().size() == 2);
  CHECK(deflated.read(deflated.entries()[1]) == "stored");
  CHECK_THROWS_WITH_AS(deflated.read(deflated.entries()[0]), doctest::Contains("entry 'a' is compressed (method 8)"),
                       gb::Error);
  CHECK(error_of(dir, make_zip({{"a", "xyz", 0, 1}})).find("entry 'a' is encrypted") != std::string::npos);
  CHECK(error_of(dir, make_zip({{"a", "xyz", 0, 0, 0xffffffff}})).find("entry 'a' needs ZIP64") != std::string::npos);
  CHECK(error_of(dir, make_zip({{"a", "xyz"}}, 0xffff)).find("ZIP64 archive") != std::string::npos);
  CHECK(error_of(dir, make_zip({{"a", "xyz", 0, 0, 1000}})).find("runs past the end of the file") != std::string::npos);
  CHECK(error_of(dir, make_zip({{"a", "xyz"}}, 2)).find("central directory entry 1 is damaged") != std::string::npos);
  CHECK(error_of(dir, "PK\x03\x04 not really a zip file at all").find("no end-of-central-directory record") !=
        std::string::npos);
  std::string bad_local = make_zip({{"a", "xyz"}});
  bad_local[0] = 'X';
  CHECK(error_of(dir, bad_local).find("entry 'a' has no local header at offset 0") != std::string::npos);
  CHECK(error_of(dir, "PK").find("too short for a zip") != std::string::npos);
  CHECK(error_of(dir, make_zip({{"a", "xyz"}})).empty());
  // Every cut loses the end record or points past the end.
  std::string good = make_zip({{"archive/data.pkl", "PICKLE"}, {"archive/data/0", "0123456789"}});
  for (size_t len = 0; len < good.size(); ++len) {
    CAPTURE(len);
    std::string msg = error_of(dir, good.substr(0, len));
    CHECK(msg.find("z.zip' is not a readable PyTorch zip file") != std::string::npos);
  }
}
