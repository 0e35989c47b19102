// engine/data/idx.cpp — the IDX reader: header checks first, then one read of the data, converted from big-endian.
#include "glassbox/data/idx.h"

#include <bit>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "glassbox/ops/factory.h"

namespace gb::data {
namespace {

struct IdxType {
  int code;
  const char* name;
  int bytes;
};
constexpr IdxType k_types[] = {{0x08, "ubyte", 1}, {0x09, "byte", 1},    {0x0B, "int16", 2},
                               {0x0C, "int32", 4}, {0x0D, "float32", 4}, {0x0E, "float64", 8}};

template <class T>
T big_endian(const uint8_t* p) {
  using U = std::conditional_t<
      sizeof(T) == 1, uint8_t,
      std::conditional_t<sizeof(T) == 2, uint16_t, std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;
  U u = 0;
  for (size_t i = 0; i < sizeof(T); ++i) u = U(u << 8) | p[i];
  return std::bit_cast<T>(u);
}

std::vector<uint8_t> read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  GB_CHECK(f, "read_idx: cannot open ", path, ": ", std::strerror(errno),
           "; give the path of an IDX file (MNIST: train-images-idx3-ubyte, ...)");
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

}  // namespace

Tensor read_idx(const std::string& path) {
  std::vector<uint8_t> b = read_all(path);
  GB_CHECK(b.size() >= 4, "read_idx: ", path, ": truncated at byte offset ", b.size(),
           ": the 4-byte magic number (0x00 0x00 type ndims) is incomplete");
  const IdxType* type = nullptr;
  for (const IdxType& t : k_types)
    if (t.code == b[2]) type = &t;
  if (b[0] != 0 || b[1] != 0 || !type) {
    std::ostringstream magic;
    magic << std::hex << big_endian<uint32_t>(b.data());
    GB_CHECK(false, "read_idx: ", path, ": bad magic number 0x", magic.str(), " at byte offset 0: an IDX file starts ",
             "with two zero bytes, a type (0x08 ubyte, 0x09 byte, 0x0B int16, 0x0C int32, 0x0D float32, 0x0E "
             "float64) and the number of dims; is this a gzipped (.gz) file? gunzip it first");
  }
  const int ndim = b[3];
  const size_t header = 4 + 4 * size_t(ndim);
  GB_CHECK(b.size() >= header, "read_idx: ", path, ": truncated at byte offset ", b.size(), ": the header declares ",
           ndim, " dims, whose sizes end at byte offset ", header);
  std::vector<int64_t> dims;
  int64_t count = 1;
  for (int d = 0; d < ndim; ++d) {
    int64_t n = big_endian<int32_t>(&b[4 + 4 * d]);
    GB_CHECK(n >= 0, "read_idx: ", path, ": dim ", d, " at byte offset ", 4 + 4 * d, " is negative (", n, ")");
    dims.push_back(n);
    // no file holds 2^59 values (of up to 8 bytes): a header that multiplies past that is damaged (and the byte
    // count below must not overflow)
    GB_CHECK(n == 0 || count <= (int64_t(1) << 59) / n, "read_idx: ", path, ": the header's dims ", IntArrayRef(dims),
             " (of ", ndim, ") already declare more values than any file holds: the header is damaged; download or ",
             "copy the file again");
    count *= n;
  }
  const size_t want = header + size_t(count) * type->bytes;
  GB_CHECK(b.size() >= want, "read_idx: ", path, ": truncated at byte offset ", b.size(), ": the header says ",
           IntArrayRef(dims), " ", type->name, " values, which end at byte offset ", want,
           "; the file was cut short: download or copy it again");
  GB_CHECK(b.size() == want, "read_idx: ", path, ": ", b.size() - want, " unexpected bytes after byte offset ", want,
           " (the end of the ", IntArrayRef(dims), " ", type->name, " values the header declares)");
  const uint8_t* p = b.data() + header;
  if (type->code == 0x0D || type->code == 0x0E) {
    Tensor t = gb::empty(dims, TensorOptions().dtype(type->code == 0x0D ? kFloat : kDouble));
    if (type->code == 0x0D) {
      float* o = t.data_ptr<float>();
      for (int64_t i = 0; i < count; ++i) o[i] = big_endian<float>(p + 4 * i);
    } else {
      double* o = t.data_ptr<double>();
      for (int64_t i = 0; i < count; ++i) o[i] = big_endian<double>(p + 8 * i);
    }
    return t;
  }
  Tensor t = gb::empty(dims, TensorOptions().dtype(kInt32));
  int32_t* o = t.data_ptr<int32_t>();
  for (int64_t i = 0; i < count; ++i) {
    switch (type->code) {
      case 0x08:
        o[i] = p[i];
        break;
      case 0x09:
        o[i] = static_cast<int8_t>(p[i]);
        break;
      case 0x0B:
        o[i] = big_endian<int16_t>(p + 2 * i);
        break;
      default:
        o[i] = big_endian<int32_t>(p + 4 * i);
        break;
    }
  }
  return t;
}

namespace datasets {

MNIST::MNIST(const std::string& root, Mode mode)
    : MNIST(root + (mode == Mode::kTrain ? "/train-images-idx3-ubyte" : "/t10k-images-idx3-ubyte"),
            root + (mode == Mode::kTrain ? "/train-labels-idx1-ubyte" : "/t10k-labels-idx1-ubyte")) {
  train_ = mode == Mode::kTrain;
}

MNIST::MNIST(const std::string& images_file, const std::string& labels_file) {
  Tensor images = read_idx(images_file), labels = read_idx(labels_file);
  GB_CHECK(images.dim() == 3, "MNIST: ", images_file, " holds ", images.sizes(), " values; expected (N,H,W) images");
  GB_CHECK(labels.dim() == 1 && labels.size(0) == images.size(0), "MNIST: ", labels_file, " holds ", labels.sizes(),
           " labels for ", images.size(0), " images in ", images_file, "; the two files must match");
  images_ = images.to(kFloat).div(255.0).unsqueeze(1).contiguous();
  targets_ = labels.to(kInt64);
}

Example<> MNIST::get(size_t index) {
  const int64_t n = images_.size(0);
  GB_CHECK_INDEX(index < static_cast<size_t>(n), "MNIST: index ", index, " is out of range for ", n, " samples");
  return {images_[static_cast<int64_t>(index)], targets_[static_cast<int64_t>(index)]};
}

}  // namespace datasets
}  // namespace gb::data
