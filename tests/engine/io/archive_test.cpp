// tests/engine/io/archive_test.cpp — OutputArchive / InputArchive within glassbox: values and nested archives round
// trip, a module's save/load, IValue's kinds, the refusals by key, and damaged files (every truncation) as errors.
// (Reading and writing libtorch's own files: tests/oracle/serialize_oracle_test.cpp.)
#include <doctest/doctest.h>

#include <sstream>

#include "engine/io/io_test_util.h"
#include "glassbox/glassbox.h"
#include "support/check.h"

using gbtest::values;
using iotest::TempDir;

TEST_CASE("an archive round-trips tensors, values and nested archives, through a file, a stream and a function") {
  TempDir tmp;
  gb::serialize::OutputArchive out, head;
  out.write("w", gb::tensor({1.0f, 2.0f}));
  out("steps", gb::IValue(int64_t(-5)));  // operator() is write
  out.write("lr", gb::IValue(1e-3));
  out.write("name", gb::IValue(std::string("adam")));
  out.write("none", gb::IValue());
  head.write("b", gb::tensor({3, 4}).to(gb::kUInt8), /*is_buffer=*/true);
  out.write("head", head);
  head.write("later", gb::ones({1}));  // written after: not in the copy `out` holds
  CHECK_THROWS_WITH_AS(out.write("w", gb::ones({1})), doctest::Contains("the key 'w' was written already"), gb::Error);
  CHECK_THROWS_WITH_AS(out.write("u", gb::Tensor()), doctest::Contains("undefined"), gb::Error);
  out.save_to(tmp / "a.pt");

  std::ostringstream os;
  out.save_to(os);
  std::string via_func;
  out.save_to([&](const void* d, size_t n) {
    via_func.append(static_cast<const char*>(d), n);
    return n;
  });
  CHECK(via_func == os.str());

  for (int source = 0; source < 3; ++source) {
    CAPTURE(source);
    gb::serialize::InputArchive in;
    if (source == 0) {
      in.load_from(tmp / "a.pt");
    } else if (source == 1) {
      std::istringstream is(os.str());
      in.load_from(is);
    } else {
      in.load_from(via_func.data(), via_func.size());
    }
    CHECK(in.keys() == std::vector<std::string>{"w", "steps", "lr", "name", "none", "head"});
    gb::Tensor w;
    in.read("w", w);
    CHECK(values(w) == std::vector<double>{1, 2});
    gb::IValue v;
    in("steps", v);
    CHECK(v.toInt() == -5);
    CHECK(v.toDouble() == -5.0);  // an int reads as a double, as libtorch's
    in.read("lr", v);
    CHECK(v.toDouble() == 1e-3);
    CHECK_THROWS_WITH_AS(v.toInt(), doctest::Contains("expected Int but got Double"), gb::Error);
    in.read("name", v);
    CHECK(v.toStringRef() == "adam");
    in.read("none", v);
    CHECK(v.isNone());
    gb::serialize::InputArchive h;
    in.read("head", h);
    gb::Tensor b;
    h.read("b", b, /*is_buffer=*/true);
    CHECK(b.scalar_type() == gb::kUInt8);
    CHECK(values(b) == std::vector<double>{3, 4});
    CHECK(h.keys() == std::vector<std::string>{"b"});
    CHECK_THROWS_WITH_AS(h.read("later", b), doctest::Contains("has no tensor 'later' (it has b)"), gb::Error);
    CHECK_THROWS_WITH_AS(in.read("head", v), doctest::Contains("holds a nested archive"), gb::Error);
    CHECK_THROWS_WITH_AS(in.read("w", h), doctest::Contains("holds Tensor, not a nested archive"), gb::Error);
  }
}

TEST_CASE("Module::save / load and gb::save / gb::load of a module in the archive form") {
  TempDir tmp;
  gb::manual_seed(9);
  gb::nn::Sequential net(gb::nn::Conv2d(gb::nn::Conv2dOptions(1, 2, 3)), gb::nn::BatchNorm2d(2));
  net->forward(gb::randn({2, 1, 5, 5}));
  gb::save(net, tmp / "net.pt");
  gb::nn::Sequential fresh(gb::nn::Conv2d(gb::nn::Conv2dOptions(1, 2, 3)), gb::nn::BatchNorm2d(2));
  const void* weight_storage = fresh->named_parameters()["0.weight"].data_ptr();
  gb::load(fresh, tmp / "net.pt");
  CHECK(fresh->state_dict().keys() == net->state_dict().keys());
  for (const auto& item : net->state_dict()) CHECK(values(fresh->state_dict()[item.key()]) == values(item.value()));
  CHECK(fresh->named_parameters()["0.weight"].data_ptr() == weight_storage);  // loaded in place
  // the same file read as an archive, as libtorch code does
  gb::nn::Sequential third(gb::nn::Conv2d(gb::nn::Conv2dOptions(1, 2, 3)), gb::nn::BatchNorm2d(2));
  gb::serialize::InputArchive in;
  in.load_from(tmp / "net.pt");
  third->load(in);
  CHECK(values(third->named_buffers()["1.running_mean"]) == values(net->named_buffers()["1.running_mean"]));
  gb::nn::Sequential other(gb::nn::Linear(2, 2));
  CHECK_THROWS_WITH_AS(other->load(in),
                       doctest::Contains("the tensor 'weight' has shape [2, 1, 3, 3] in the archive but [2, 2] in "
                                         "the module"),
                       gb::Error);
  gb::nn::Linear lone(2, 2);
  CHECK_THROWS_WITH_AS(lone->load(in), doctest::Contains("has no tensor 'weight' (it has 0, 1)"), gb::Error);
  // ".safetensors" keeps the safetensors form
  gb::save(net, tmp / "net.safetensors");
  CHECK(gb::load(tmp / "net.safetensors").keys() == net->state_dict().keys());
}

TEST_CASE("a damaged archive is an error at every cut, and a state dict is not an archive") {
  TempDir tmp;
  gb::serialize::OutputArchive out;
  out.write("w", gb::arange(4, gb::kFloat));
  out.write("n", gb::IValue(3));
  out.save_to(tmp / "good.pt");
  const std::string good = iotest::read_bytes(tmp / "good.pt");
  int errors = 0;
  for (size_t cut = 0; cut < good.size(); cut += 7) {
    iotest::write_bytes(tmp / "cut.pt", good.substr(0, cut));
    gb::serialize::InputArchive in;
    try {
      in.load_from(tmp / "cut.pt");
    } catch (const gb::Error&) {
      ++errors;
    }
  }
  CHECK(errors == int((good.size() + 6) / 7));  // every cut refused
  gb::StateDict sd;
  sd.insert("a", gb::ones({1}));
  gb::save(sd, tmp / "sd.safetensors");
  gb::serialize::InputArchive in;
  CHECK_THROWS_AS(in.load_from(tmp / "sd.safetensors"), gb::Error);
}
