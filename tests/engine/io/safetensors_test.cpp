// tests/engine/io/safetensors_test.cpp — the safetensors writer (byte-exact header, every dtype, odd shapes,
// non-contiguous input, metadata) and the reader's validation (every truncation, each malformed header, fuzz).
#include <doctest/doctest.h>

#include <random>

#include "engine/io/io_test_util.h"

using iotest::safetensors_bytes;
using iotest::TempDir;
using gbtest::values;

namespace {

// The message of the gb::Error that loading `bytes` throws ("" if it loads).
std::string load_error(const TempDir& dir, const std::string& bytes) {
  std::string path = dir / "bad.safetensors";
  iotest::write_bytes(path, bytes);
  try {
    gb::load(path);
  } catch (const gb::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("the header matches the format byte for byte") {
  TempDir dir;
  gb::StateDict sd;
  sd.insert("a", gb::tensor({1.0f, 2.0f}));
  gb::save(sd, dir / "a.safetensors", {{"k", "v"}});
  // 79 bytes of JSON + 1 space = 80 = 0x50; then 1.0f and 2.0f little endian.
  std::string header = R"({"__metadata__":{"k":"v"},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}} )";
  std::string expected = std::string("\x50\0\0\0\0\0\0\0", 8) + header + std::string("\0\0\x80\x3f\0\0\0\x40", 8);
  CHECK(iotest::read_bytes(dir / "a.safetensors") == expected);

  // No metadata: no "__metadata__" key; an empty dict is the 8-byte header "{}" + 6 spaces.
  gb::save(gb::StateDict(), dir / "empty.safetensors");
  CHECK(iotest::read_bytes(dir / "empty.safetensors") == std::string("\x08\0\0\0\0\0\0\0{}      ", 16));
  CHECK(gb::load(dir / "empty.safetensors").empty());
}

TEST_CASE("every dtype, 0-dim and empty tensors, and metadata round-trip") {
  TempDir dir;
  gb::StateDict sd;
  sd.insert("f32", gb::tensor({1.5f, -2.25f, 3.0f}));
  sd.insert("f64", gb::tensor({1.0 / 3.0, -1e300, 2.5}, gb::kDouble));
  sd.insert("f16", gb::tensor({0.5, -65504.0, 0.099975586}, gb::kHalf));
  sd.insert("bf16", gb::tensor({1.0, -3.0e38, 0.0078125}, gb::kBFloat16));
  sd.insert("i32", gb::arange(-3, 3, gb::TensorOptions().dtype(gb::kInt)).reshape({2, 3}));
  sd.insert("i64", gb::tensor(std::initializer_list<int64_t>{int64_t(1) << 60, -7, 0}));
  sd.insert("bool", gb::tensor({1.0, 0.0, 1.0, 1.0}).gt(0.5));
  sd.insert("u8", gb::tensor({0, 7, 200, 255}).to(gb::kUInt8));
  sd.insert("i8", gb::tensor({-128, 5, 127}).to(gb::kInt8));
  sd.insert("i16", gb::tensor({-32768, -300, 32767}).to(gb::kInt16));
  sd.insert("scalar", gb::scalar_tensor(7.25, gb::kDouble));
  sd.insert("empty", gb::zeros({0, 3}));
  gb::Metadata md{{"epoch", "3"}, {"note", "héllo \"quoted\""}};
  gb::save(sd, dir / "all.safetensors", md);

  gb::StateDict back = gb::load(dir / "all.safetensors");
  REQUIRE(back.keys() == sd.keys());
  for (const auto& item : sd) {
    const gb::Tensor& b = back[item.key()];
    CAPTURE(item.key());
    CHECK(b.scalar_type() == item.value().scalar_type());
    CHECK(b.sizes().vec() == item.value().sizes().vec());
    CHECK(values(b) == values(item.value()));
  }
  CHECK(back["scalar"].dim() == 0);
  CHECK(back["empty"].numel() == 0);
  CHECK(values(back["bool"]) == std::vector<double>{1, 0, 1, 1});
  CHECK(values(back["u8"]) == std::vector<double>{0, 7, 200, 255});
  CHECK(values(back["i8"]) == std::vector<double>{-128, 5, 127});
  const std::string bytes = iotest::read_bytes(dir / "all.safetensors");
  for (const char* name : {"\"U8\"", "\"I8\"", "\"I16\""}) CHECK_MESSAGE(bytes.find(name) != std::string::npos, name);
  CHECK(gb::load_metadata(dir / "all.safetensors") == md);
}

TEST_CASE("non-contiguous tensors are saved contiguous with their values") {
  TempDir dir;
  gb::Tensor base = gb::arange(12, gb::TensorOptions().dtype(gb::kFloat)).reshape({3, 4});
  gb::StateDict sd;
  sd.insert("t", base.t());                           // [4, 3], strides (1, 4)
  sd.insert("step", base.slice(1, 0, 4, 2));          // [3, 2], every other column
  sd.insert("row", base.select(0, 1));                // offset 4
  REQUIRE(!sd["t"].is_contiguous());
  gb::save(sd, dir / "v.safetensors");
  gb::StateDict back = gb::load(dir / "v.safetensors");
  CHECK(back["t"].is_contiguous());
  CHECK(values(back["t"]) == std::vector<double>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
  CHECK(values(back["step"]) == std::vector<double>{0, 2, 4, 6, 8, 10});
  CHECK(values(back["row"]) == std::vector<double>{4, 5, 6, 7});
  // Each tensor's own bytes only: 12 + 6 + 4 floats.
  std::string header_len = iotest::read_bytes(dir / "v.safetensors").substr(0, 8);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | uint8_t(header_len[size_t(i)]);
  CHECK(iotest::read_bytes(dir / "v.safetensors").size() == 8 + n + 22 * 4);
}

TEST_CASE("save refuses what the format cannot hold") {
  TempDir dir;
  gb::StateDict sd;
  sd.insert("__metadata__", gb::ones({1}));
  CHECK_THROWS_WITH_AS(gb::save(sd, dir / "x.safetensors"), doctest::Contains("reserves it"), gb::Error);
  gb::StateDict undef;
  undef.insert("w", gb::Tensor());
  CHECK_THROWS_WITH_AS(gb::save(undef, dir / "x.safetensors"), doctest::Contains("'w' is undefined"), gb::Error);
  gb::StateDict meta;
  meta.insert("w", gb::empty({2}, gb::TensorOptions().device(gb::kMeta)));
  CHECK_THROWS_WITH_AS(gb::save(meta, dir / "x.safetensors"), doctest::Contains("meta device"), gb::Error);
  CHECK(!std::filesystem::exists(dir / "x.safetensors"));
  CHECK(std::filesystem::is_empty(dir.path));  // no temp file left behind
}

TEST_CASE("every truncation of a file is a clear error") {
  TempDir dir;
  gb::StateDict sd;
  sd.insert("a", gb::tensor({1.0f, 2.0f, 3.0f}));
  sd.insert("b", gb::tensor(std::initializer_list<int64_t>{5}));
  gb::save(sd, dir / "good.safetensors", {{"k", "v"}});
  std::string good = iotest::read_bytes(dir / "good.safetensors");
  for (size_t len = 0; len < good.size(); ++len) {
    CAPTURE(len);
    std::string msg = load_error(dir, good.substr(0, len));
    CHECK(msg.find("bad.safetensors") != std::string::npos);
    CHECK(msg.find("not a valid safetensors file") != std::string::npos);
  }
  CHECK(load_error(dir, good.substr(0, 5)).find("5 bytes, shorter than the 8-byte header length") != std::string::npos);
  CHECK(load_error(dir, good.substr(0, 20)).find("only 12 bytes follow") != std::string::npos);
  CHECK(load_error(dir, good.substr(0, good.size() - 1)).find("past the end of the data") != std::string::npos);
  CHECK(load_error(dir, good).empty());
}

TEST_CASE("each malformed header is named") {
  TempDir dir;
  std::string eight(8, 'x');
  auto err = [&](const std::string& header, const std::string& data = "") {
    return load_error(dir, safetensors_bytes(header, data));
  };
  CHECK_MESSAGE(err("{\"a\": ").find("is not valid JSON") != std::string::npos, err("{\"a\": "));
  CHECK(err("[1, 2]").find("the header is a JSON array, not an object") != std::string::npos);
  CHECK(err(R"({"a": 5})").find("tensor 'a' is described by number, not an object") != std::string::npos);
  CHECK(err(R"({"a": {"shape": [2], "data_offsets": [0, 8]}})").find("tensor 'a' has no \"dtype\"") != std::string::npos);
  CHECK(err(R"({"a": {"dtype": "F32", "data_offsets": [0, 8]}})").find("no \"shape\"") != std::string::npos);
  CHECK(err(R"({"a": {"dtype": "F32", "shape": [2]}})").find("no \"data_offsets\"") != std::string::npos);
  CHECK(err(R"({"a": {"dtype": 7, "shape": [2], "data_offsets": [0, 8]}})", eight).find("dtype 7, not a string") !=
        std::string::npos);
  CHECK(err(R"({"a": {"dtype": "F32", "shape": 2, "data_offsets": [0, 8]}})", eight).find("not a list of sizes") !=
        std::string::npos);
  CHECK(err(R"({"a": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}})", eight).find("not a non-negative") !=
        std::string::npos);
  CHECK(err(R"({"a": {"dtype": "F32", "shape": [2.5], "data_offsets": [0, 8]}})", eight).find("not a non-negative") !=
        std::string::npos);
  CHECK(err(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0]}})", eight).find("not [begin, end]") !=
        std::string::npos);
  CHECK(err(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [8, 0]}})", eight).find("end before begin") !=
        std::string::npos);
  CHECK(err(R"({"a": {"dtype": "Q7", "shape": [2], "data_offsets": [0, 8]}})", eight).find("unknown dtype \"Q7\"") !=
        std::string::npos);
  std::string u16 = err(R"({"a": {"dtype": "U16", "shape": [4], "data_offsets": [0, 8]}})", eight);
  CHECK(u16.find("tensor 'a' has dtype U16, which glassbox does not support") != std::string::npos);
  CHECK(u16.find("to(torch.int32)") != std::string::npos);
  CHECK(err(R"({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}})", eight)
            .find("shape [3] of F32 (12 bytes) but data_offsets [0,8] span 8 bytes") != std::string::npos);
  CHECK(err(R"({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}})", eight)
            .find("past the end of the data (8 bytes)") != std::string::npos);
  CHECK(err(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})", eight)
            .find("tensor 'b' (bytes 4-8) overlaps tensor 'a' (bytes 0-8)") != std::string::npos);
  CHECK(err(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})", eight).find("gap at bytes 0-4") !=
        std::string::npos);
  CHECK(err(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})", eight)
            .find("4 bytes follow the last tensor's data") != std::string::npos);
  CHECK(err(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                "a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})", eight)
            .find("the name 'a' appears twice") != std::string::npos);
  CHECK(err(R"({"__metadata__": {"k": 1}})").find("metadata 'k' is 1, not a string") != std::string::npos);
  CHECK(err(R"({"__metadata__": [1]})").find("\"__metadata__\" is a JSON array") != std::string::npos);
  std::string huge = std::string("\xff\xff\xff\xff\xff\xff\xff\x7f", 8) + "{}";
  CHECK(load_error(dir, huge).find("the header length (bytes 0-7) is 9223372036854775807") != std::string::npos);
  // The messages say what to do next.
  CHECK(err("[1]").find("write it again") != std::string::npos);
  // A valid hand-written file with zero-length tensors sharing an offset and out-of-order offsets loads.
  std::string ok = err(R"({"b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]},
                           "z": {"dtype": "I64", "shape": [0, 2], "data_offsets": [4, 4]},
                           "a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})",
                       std::string("\0\0\x80\x3f\0\0\0\x40", 8));
  CHECK(ok.empty());
  gb::StateDict sd = gb::load(dir / "bad.safetensors");
  CHECK(sd.keys() == std::vector<std::string>{"b", "z", "a"});  // the header's order
  CHECK(values(sd["a"]) == std::vector<double>{1.0});
  CHECK(values(sd["b"]) == std::vector<double>{2.0});
}

TEST_CASE("random byte flips load or throw gb::Error, never crash") {
  TempDir dir;
  gb::StateDict sd;
  sd.insert("w", gb::arange(6, gb::TensorOptions().dtype(gb::kFloat)).reshape({2, 3}));
  sd.insert("flag", gb::tensor({1.0, 0.0}).gt(0.5));
  sd.insert("n", gb::scalar_tensor(3, gb::kLong));
  gb::save(sd, dir / "good.safetensors", {{"step", "10"}});
  std::string good = iotest::read_bytes(dir / "good.safetensors");
  std::mt19937 rng(1234);
  int loaded = 0, refused = 0;
  for (int it = 0; it < 2000; ++it) {
    std::string bytes = good;
    int flips = 1 + int(rng() % 3);
    for (int f = 0; f < flips; ++f) bytes[rng() % bytes.size()] ^= char(1 + rng() % 255);
    iotest::write_bytes(dir / "fuzz.safetensors", bytes);
    try {
      gb::StateDict back = gb::load(dir / "fuzz.safetensors");
      for (const auto& item : back) (void)values(item.value());  // the tensors are usable
      ++loaded;
    } catch (const gb::Error&) {
      ++refused;
    }
  }
  CHECK(loaded + refused == 2000);
  CHECK(refused > 0);
  CHECK(loaded > 0);  // flips in the data bytes still load
}
