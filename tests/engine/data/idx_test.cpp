// tests/engine/data/idx_test.cpp — engine/data/idx.cpp: IDX files written here, read back; bad files named.
#include <doctest/doctest.h>

#include <fstream>

#include "data_test_util.h"
#include "traces/temp_dir.h"

namespace {
void put32(std::vector<uint8_t>& b, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) b.push_back(uint8_t(v >> s));
}
std::vector<uint8_t> idx(uint8_t type, std::vector<uint32_t> dims, std::vector<uint8_t> data) {
  std::vector<uint8_t> b = {0, 0, type, uint8_t(dims.size())};
  for (uint32_t d : dims) put32(b, d);
  b.insert(b.end(), data.begin(), data.end());
  return b;
}
void write(const std::string& path, const std::vector<uint8_t>& b) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
}
}  // namespace

TEST_CASE("ubyte images and labels (MNIST layout); int16 and float32 big-endian values") {
  TempDir tmp;
  std::vector<uint8_t> pixels;
  for (int i = 0; i < 3 * 2 * 2; ++i) pixels.push_back(uint8_t(i * 20));
  write(tmp.file("train-images-idx3-ubyte"), idx(0x08, {3, 2, 2}, pixels));
  write(tmp.file("train-labels-idx1-ubyte"), idx(0x08, {3}, {7, 0, 9}));
  gb::Tensor t = gb::data::read_idx(tmp.file("train-images-idx3-ubyte"));
  CHECK(t.sizes() == gb::IntArrayRef({3, 2, 2}));
  CHECK(t.scalar_type() == gb::kInt32);
  CHECK(t[2][1][1].item<int64_t>() == 220);
  gb::data::datasets::MNIST mnist(tmp.dir.string());
  CHECK(mnist.size() == 3);
  auto e = mnist.get(1);
  CHECK(e.data.sizes() == gb::IntArrayRef({1, 2, 2}));
  CHECK(e.data[0][0][1].item<float>() == doctest::Approx(100.0 / 255.0));
  CHECK(e.target.item<int64_t>() == 0);

  write(tmp.file("s.idx"), idx(0x0B, {2}, {0xFF, 0xFE, 0x01, 0x00}));  // -2, 256
  gb::Tensor s = gb::data::read_idx(tmp.file("s.idx"));
  CHECK(s[0].item<int64_t>() == -2);
  CHECK(s[1].item<int64_t>() == 256);
  write(tmp.file("f.idx"), idx(0x0D, {1}, {0x3F, 0xC0, 0x00, 0x00}));  // 1.5f
  CHECK(gb::data::read_idx(tmp.file("f.idx"))[0].item<float>() == 1.5f);
}

TEST_CASE("truncated, corrupt and mismatched files name the file and the byte offset") {
  TempDir tmp;
  std::string p = tmp.file("bad-idx3-ubyte");
  write(p, idx(0x08, {2, 2, 2}, {1, 2, 3}));  // 8 values declared, 3 present
  CHECK_THROWS_WITH(gb::data::read_idx(p), gbtest::contains(p + ": truncated at byte offset 19: the header says "
                                                                "[2, 2, 2] ubyte values, which end at byte offset 24"));
  write(p, {0x1f, 0x8b, 0x08, 0x00});  // gzip bytes
  CHECK_THROWS_WITH(gb::data::read_idx(p), gbtest::contains(p + ": bad magic number 0x1f8b0800 at byte offset 0"));
  write(p, {0, 0, 8, 3, 0, 0});  // dims cut short
  CHECK_THROWS_WITH(gb::data::read_idx(p),
                    gbtest::contains(p + ": truncated at byte offset 6: the header declares 3 dims"));
  write(p, idx(0x08, {2}, {1, 2, 3}));
  CHECK_THROWS_WITH(gb::data::read_idx(p), gbtest::contains("1 unexpected bytes after byte offset 10"));
  CHECK_THROWS_WITH(gb::data::read_idx(tmp.file("missing")), gbtest::contains("cannot open " + tmp.file("missing")));
  // found by fuzz/dataset_fuzz.cpp: dims whose product overflows int64 (signed overflow before the size check)
  write(p, {0x00, 0x00, 0x08, 0x03, 0x00, 0x6c, 0x00, 0x00, 0x2c, 0x02, 0x00, 0x00,
            0x00, 0x0d, 0x1a, 0x78, 0x00, 0x00, 0x00, 0x1b, 0x41, 0x4e, 0x2c, 0x5b});
  CHECK_THROWS_WITH(gb::data::read_idx(p),
                    gbtest::contains("[7077888, 738328576, 858744] (of 3) already declare more values "
                                     "than any file holds"));
  write(tmp.file("i"), idx(0x08, {2, 1, 1}, {1, 2}));
  write(tmp.file("l"), idx(0x08, {3}, {1, 2, 3}));
  CHECK_THROWS_WITH(gb::data::datasets::MNIST(tmp.file("i"), tmp.file("l")),
                    gbtest::contains("the two files must match"));
}
