// tests/engine/io/pt_import_test.cpp — gb::load_pt against files written by PyTorch itself (Debian's python3-torch,
// run once for the whole file): every supported dtype with values from torch.arange formulas, views sharing a
// storage (a transposed weight, a row at an offset), 0-dim and empty tensors, a real Sequential(Linear, BatchNorm1d)
// state dict compared with the values Python dumps, a plain dict, a DataParallel-style dict; and the refusals:
// the legacy format, forbidden globals (a set, a custom class), an unsupported dtype, a nested dict, a damaged zip.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>
#include <tuple>

#include "engine/io/io_test_util.h"
#include "io/zip_reader.h"

using iotest::TempDir;
using gbtest::values;

namespace {

const char* kScript = R"PY(
import collections, json, sys, torch
out = sys.argv[1]
def dump(sd, name):
    json.dump({k: {"shape": list(v.shape), "dtype": str(v.dtype),
                   "values": v.double().flatten().tolist()} for k, v in sd.items()}, open(f"{out}/{name}.json", "w"))

sd = collections.OrderedDict()
sd["f32"] = torch.arange(12, dtype=torch.float32).reshape(3, 4) / 4 - 1
sd["f64"] = torch.arange(5, dtype=torch.float64) * 0.1 - 0.2
sd["f16"] = (torch.arange(6) - 3).half() / 8
sd["bf16"] = torch.arange(4).bfloat16() * 1.5 + 0.25
sd["i64"] = torch.arange(5) * 10**12 - 3
sd["i32"] = torch.arange(4, dtype=torch.int32) - 2
sd["flag"] = torch.arange(6) % 3 == 0
sd["u8"] = torch.tensor([0, 7, 200, 255], dtype=torch.uint8)
sd["i8"] = torch.tensor([-128, 5, 127], dtype=torch.int8)
sd["i16"] = torch.tensor([-32768, -300, 32767], dtype=torch.int16)
sd["f32_t"] = sd["f32"].t()          # shares f32's storage, strides (1, 4)
sd["f32_row"] = sd["f32"][1]         # storage offset 4
sd["scalar"] = torch.tensor(2.5, dtype=torch.float64)
sd["empty"] = torch.zeros(0, 3)
torch.save(sd, f"{out}/dtypes.pt")
dump(sd, "dtypes")

torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.BatchNorm1d(8))
net(torch.randn(16, 4))              # the running stats move off their defaults
torch.save(net.state_dict(), f"{out}/seq.pt")
dump(net.state_dict(), "seq")

torch.save({"a": torch.ones(2), "b": torch.arange(3)}, f"{out}/plain.pt")
torch.save(collections.OrderedDict((f"module.{k}", v) for k, v in net.state_dict().items()), f"{out}/ddp.pt")
torch.save(sd, f"{out}/legacy.pt", _use_new_zipfile_serialization=False)
torch.save({"w": torch.ones(2), "tags": {1, 2}}, f"{out}/set.pt")
class Custom:
    pass
torch.save({"w": torch.ones(2), "obj": Custom()}, f"{out}/custom.pt")
torch.save({"w": torch.ones(2), "z": torch.ones(2, dtype=torch.complex64)}, f"{out}/complex.pt")
torch.save({"w": torch.ones(2), "inner": {"x": torch.ones(1)}}, f"{out}/nested.pt")
torch.save(net, f"{out}/module.pt")
print("ok")
)PY";

std::string python() {
  if (const char* p = std::getenv("GLASSBOX_PYTHON")) return p;
  return std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";  // Debian's, with torch
}

// The files, written once per test run.
const std::string& files() {
  static TempDir dir;
  static bool written = [] {
    std::string py = python();
    int has_torch = std::system((py + " -c 'import torch' 2>/dev/null").c_str());
    if (has_torch != 0) return false;
    iotest::write_bytes(dir / "make.py", kScript);
    return std::system((py + " " + (dir / "make.py") + " " + dir.path + " > /dev/null").c_str()) == 0;
  }();
  REQUIRE_MESSAGE(written, "Python with PyTorch is needed to write the .pt files: `import torch` failed for '",
                  python(),
                  "'. Install it with `apt-get install python3-torch` (tools/install-deps.sh does), or "
                  "point GLASSBOX_PYTHON at a python that has torch");
  return dir.path;
}

nlohmann::ordered_json expected(const std::string& name) {
  return nlohmann::ordered_json::parse(iotest::read_bytes(files() + "/" + name + ".json"));
}

// Max |gb - torch| over every entry, after checking names, order, shapes and dtypes.
double compare(const gb::StateDict& sd, const nlohmann::ordered_json& want) {
  std::vector<std::string> names;
  for (const auto& [k, v] : want.items()) names.push_back(k);
  CHECK(sd.keys() == names);
  double worst = 0;
  for (const auto& item : want.items()) {  // no structured binding: CAPTURE's lambda captures it (Clang 14)
    const std::string& k = item.key();
    const auto& v = item.value();
    CAPTURE(k);
    const gb::Tensor* t = sd.find(k);
    REQUIRE(t != nullptr);
    CHECK(t->sizes().vec() == v["shape"].get<std::vector<int64_t>>());
    std::string dt = v["dtype"];
    CHECK(dt == std::string("torch.") + gb::python_name(t->scalar_type()));
    std::vector<double> got = values(*t), ref = v["values"].get<std::vector<double>>();
    REQUIRE(got.size() == ref.size());
    for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(got[i] - ref[i]));
  }
  return worst;
}

std::string error_of(const std::string& name) {
  try {
    gb::load(files() + "/" + name);
  } catch (const gb::Error& e) {
    return e.what();
  }
  return "";
}

// Writes `crc` into the local header and the central directory record of the entry `name`.
void patch_crc(std::string& zip, const std::string& name, uint32_t crc) {
  std::string le(4, '\0');
  for (int i = 0; i < 4; ++i) le[size_t(i)] = char((crc >> (8 * i)) & 0xff);
  for (const auto& [sig, name_at, crc_at] :
       {std::tuple{std::string("PK\x03\x04"), 30, 14}, std::tuple{std::string("PK\x01\x02"), 46, 16}}) {
    for (size_t at = zip.find(sig); at != std::string::npos; at = zip.find(sig, at + 1))
      if (zip.compare(at + size_t(name_at), name.size(), name) == 0) zip.replace(at + size_t(crc_at), 4, le);
  }
}

struct LinearLikeImpl : gb::nn::Module {
  LinearLikeImpl() {
    weight = register_parameter("weight", gb::zeros({8, 4}));
    bias = register_parameter("bias", gb::zeros({8}));
  }
  gb::Tensor forward(const gb::Tensor& x) { return x; }  // only the state matters here
  gb::Tensor weight, bias;
};
GB_MODULE(LinearLike);
struct NormLikeImpl : gb::nn::Module {
  NormLikeImpl() {
    weight = register_parameter("weight", gb::zeros({8}));
    bias = register_parameter("bias", gb::zeros({8}));
    running_mean = register_buffer("running_mean", gb::zeros({8}));
    running_var = register_buffer("running_var", gb::zeros({8}));
    num_batches_tracked = register_buffer("num_batches_tracked", gb::scalar_tensor(0, gb::kLong));
  }
  gb::Tensor forward(const gb::Tensor& x) { return x; }
  gb::Tensor weight, bias, running_mean, running_var, num_batches_tracked;
};
GB_MODULE(NormLike);

}  // namespace

TEST_CASE("every dtype, shared-storage views, 0-dim and empty tensors load with torch's values") {
  gb::StateDict sd = gb::load_pt(files() + "/dtypes.pt");
  double diff = compare(sd, expected("dtypes"));
  MESSAGE("max |glassbox - torch| over dtypes.pt: ", diff);
  CHECK(diff == 0);
  // The transposed weight and the row are views of f32's storage, as in PyTorch.
  CHECK(sd["f32_t"].strides().vec() == std::vector<int64_t>{1, 4});
  CHECK(sd["f32_t"].storage() == sd["f32"].storage());
  CHECK(sd["f32_row"].storage_offset() == 4);
  CHECK(values(sd["f32_row"]) == std::vector<double>{0, 0.25, 0.5, 0.75});
  CHECK(sd["scalar"].dim() == 0);
  CHECK(sd["empty"].sizes().vec() == std::vector<int64_t>{0, 3});
  // gb::load reads the format from the magic bytes.
  CHECK(gb::load(files() + "/dtypes.pt").keys() == sd.keys());
}

TEST_CASE("a real Sequential(Linear, BatchNorm1d) state dict loads and fills a module") {
  gb::StateDict sd = gb::load(files() + "/seq.pt");
  double diff = compare(sd, expected("seq"));
  MESSAGE("max |glassbox - torch| over seq.pt: ", diff);
  CHECK(diff == 0);
  CHECK(sd["1.num_batches_tracked"].item<int64_t>() == 1);

  gb::nn::Sequential net{LinearLike(), NormLike()};
  CHECK(gb::load(net, files() + "/seq.pt").empty());
  CHECK(values(net->named_parameters()["0.weight"]) == values(sd["0.weight"]));
  CHECK(values(net->named_buffers()["1.running_var"]) == values(sd["1.running_var"]));

  // DataParallel's "module." prefix: strict loading names the problem, strip_prefix fixes it.
  gb::nn::Sequential net2{LinearLike(), NormLike()};
  CHECK_THROWS_WITH_AS(gb::load(net2, files() + "/ddp.pt"),
                       doctest::Contains("Unexpected key(s) in state_dict: "
                                         "\"module.0.weight\""),
                       gb::Error);
  CHECK(net2->load_state_dict(gb::strip_prefix(gb::load(files() + "/ddp.pt"))).empty());
  CHECK(values(net2->named_parameters()["0.bias"]) == values(sd["0.bias"]));
}

TEST_CASE("a plain dict loads too, and map_location moves every tensor") {
  gb::StateDict sd = gb::load_pt(files() + "/plain.pt", gb::Device(gb::kCPU));
  CHECK(sd.keys() == std::vector<std::string>{"a", "b"});
  CHECK(values(sd["a"]) == std::vector<double>{1, 1});
  CHECK(values(sd["b"]) == std::vector<double>{0, 1, 2});
  CHECK(sd["b"].scalar_type() == gb::kLong);
  gb::StateDict meta = gb::load_pt(files() + "/plain.pt", gb::Device(gb::kMeta));
  CHECK(meta["a"].is_meta());
}

TEST_CASE("what the loader refuses, it names") {
  std::string legacy = error_of("legacy.pt");
  CHECK(legacy.find("legacy format") != std::string::npos);
  CHECK(legacy.find("torch.save(torch.load(path), new_path)") != std::string::npos);
  std::string set = error_of("set.pt");
  CHECK_MESSAGE(set.find("the global '__builtin__.set'") != std::string::npos, set);
  CHECK(set.find("never runs code") != std::string::npos);
  std::string custom = error_of("custom.pt");
  CHECK_MESSAGE(custom.find("the global '__main__.Custom'") != std::string::npos, custom);
  std::string complex = error_of("complex.pt");
  CHECK_MESSAGE(complex.find("entry 'z' has dtype torch.complex64, which glassbox does not support") !=
                    std::string::npos,
                complex);
  std::string nested = error_of("nested.pt");
  CHECK_MESSAGE(nested.find("entry 'inner' is a nested dict, not a tensor") != std::string::npos, nested);
  std::string module = error_of("module.pt");  // a whole pickled nn.Module
  CHECK_MESSAGE(module.find("the global 'torch.nn.modules.container.Sequential'") != std::string::npos, module);

  // Damage: every cut of a .pt is an error, never a crash or a partial dict.
  std::string good = iotest::read_bytes(files() + "/plain.pt");
  TempDir dir;
  for (size_t len = 0; len < good.size(); len += 7) {
    CAPTURE(len);
    iotest::write_bytes(dir / "cut.pt", good.substr(0, len));
    CHECK_THROWS_AS(gb::load_pt(dir / "cut.pt"), gb::Error);
  }
  std::mt19937 rng(7);
  int loaded = 0, refused = 0;
  for (int it = 0; it < 500; ++it) {
    std::string bytes = good;
    bytes[rng() % bytes.size()] ^= char(1 + rng() % 255);
    iotest::write_bytes(dir / "flip.pt", bytes);
    try {
      for (const auto& item : gb::load_pt(dir / "flip.pt")) (void)values(item.value());
      ++loaded;
    } catch (const gb::Error&) {
      ++refused;
    }
  }
  CHECK(loaded + refused == 500);
  CHECK(refused > 0);
}

TEST_CASE("random flips inside data.pkl (with the CRC made to match) load or throw gb::Error") {
  std::string good = iotest::read_bytes(files() + "/dtypes.pt");
  gb::detail::ZipReader zip(files() + "/dtypes.pt");
  const gb::detail::ZipReader::Entry* pkl = zip.find("dtypes/data.pkl");
  REQUIRE(pkl != nullptr);
  TempDir dir;
  std::mt19937 rng(11);
  int loaded = 0, refused = 0;
  for (int it = 0; it < 2000; ++it) {
    std::string bytes = good;
    int flips = 1 + int(rng() % 2);
    for (int f = 0; f < flips; ++f) bytes[pkl->offset + rng() % pkl->size] ^= char(1 + rng() % 255);
    patch_crc(bytes, pkl->name, iotest::crc32(bytes.substr(pkl->offset, pkl->size)));
    iotest::write_bytes(dir / "flip.pt", bytes);
    try {
      for (const auto& item : gb::load_pt(dir / "flip.pt")) (void)values(item.value());
      ++loaded;
    } catch (const gb::Error&) {
      ++refused;
    }
  }
  MESSAGE("data.pkl flips: ", loaded, " loaded, ", refused, " refused");
  CHECK(loaded + refused == 2000);
  CHECK(refused > 0);
  CHECK(loaded > 0);  // flips in names or values still make a valid pickle
}
