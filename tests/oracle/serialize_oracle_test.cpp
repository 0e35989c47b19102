// tests/oracle/serialize_oracle_test.cpp — glassbox's archives and libtorch's, both ways: what gb::save and
// gb::serialize::OutputArchive write, libtorch 1.13's torch::load and InputArchive read (values, dtypes, nested
// archives, a module's parameters and buffers); what libtorch's torch::save writes, glassbox reads.
#include <glassbox/glassbox.h>
#include <torch/torch.h>

#include "engine/io/io_test_util.h"
#include "oracle/torch_dtype.h"
#include "support/check.h"

// This file's names, apart from the other oracle files' (the folder builds as one translation unit).
namespace serialize_oracle {

using iotest::TempDir;

namespace {

using oracle::torch_dtype;

std::vector<double> values(const torch::Tensor& t) {
  torch::Tensor c = t.detach().to(torch::kDouble).contiguous();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

// The same tensor on both sides: same dtype, shape and values.
void check_same(const gb::Tensor& ours, const torch::Tensor& theirs) {
  REQUIRE(ours.defined());
  REQUIRE(theirs.defined());
  const bool same_dtype = torch_dtype(ours.scalar_type()) == theirs.scalar_type();
  CHECK_MESSAGE(same_dtype, gb::python_name(ours.scalar_type()), " vs ", c10::toString(theirs.scalar_type()));
  CHECK(ours.sizes().vec() == theirs.sizes().vec());
  CHECK(gbtest::values(ours) == values(theirs));
}

std::vector<gb::Tensor> sample_tensors() {
  return {gb::arange(6, gb::kFloat).view({2, 3}) / 4,
          gb::tensor({1.0 / 3, -2.5}, gb::kDouble),
          gb::tensor(std::initializer_list<int64_t>{-3, int64_t(1) << 40}),
          gb::tensor({0, 200, 255}).to(gb::kUInt8),
          gb::tensor({-128, 7}).to(gb::kInt8),
          gb::tensor({-300, 32767}).to(gb::kInt16),
          gb::tensor({5, -6}).to(gb::kInt),
          gb::tensor({0.5, -2.0}).to(gb::kHalf),
          gb::tensor({0.25, 3.0}).to(gb::kBFloat16),
          gb::tensor({1.0, 0.0, 1.0}) > 0.5,
          gb::arange(12, gb::kFloat).view({3, 4}).t(),  // not contiguous: saved as its values
          gb::scalar_tensor(2.5, gb::kDouble),
          gb::zeros({0, 3})};
}

}  // namespace

TEST_CASE("libtorch reads what glassbox saves: tensors, lists, archives with values and nested archives") {
  TempDir tmp;
  const auto tensors = sample_tensors();
  for (size_t i = 0; i < tensors.size(); ++i) {
    CAPTURE(i);
    const std::string path = tmp / ("t" + std::to_string(i) + ".pt");
    gb::save(tensors[i], path);
    torch::Tensor t;
    torch::load(t, path);
    check_same(tensors[i], t);
  }
  gb::save(tensors, tmp / "list.pt");
  std::vector<torch::Tensor> list;
  torch::load(list, tmp / "list.pt");
  REQUIRE(list.size() == tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) check_same(tensors[i], list[i]);

  gb::serialize::OutputArchive out, head, deeper;
  out.write("w", gb::tensor({1.5f, -2.0f}, gb::requires_grad()));
  out.write("running", gb::tensor({3.0f}), /*is_buffer=*/true);
  out.write("epoch", gb::IValue(int64_t(7)));
  out.write("big", gb::IValue(int64_t(1) << 40));
  out.write("negative", gb::IValue(-70000));
  out.write("lr", gb::IValue(0.125));
  out.write("name", gb::IValue("run-1"));
  out.write("flag", gb::IValue(true));
  deeper.write("z", gb::ones({2, 2}));
  head.write("b", gb::tensor({9.0f}));
  head.write("deeper", deeper);
  out.write("head", head);
  out.write("2nd key", gb::IValue(2));  // not an identifier: declared through __annotations__
  out.save_to(tmp / "archive.pt");

  torch::serialize::InputArchive in;
  in.load_from(tmp / "archive.pt");
  torch::Tensor w, running;
  in.read("w", w);
  in.read("running", running, /*is_buffer=*/true);
  CHECK(values(w) == std::vector<double>{1.5, -2.0});
  CHECK(w.requires_grad());
  CHECK(values(running) == std::vector<double>{3.0});
  c10::IValue v;
  in.read("epoch", v);
  CHECK(v.toInt() == 7);
  in.read("big", v);
  CHECK(v.toInt() == int64_t(1) << 40);
  in.read("negative", v);
  CHECK(v.toInt() == -70000);
  in.read("lr", v);
  CHECK(v.toDouble() == 0.125);
  in.read("name", v);
  CHECK(v.toStringRef() == "run-1");
  in.read("flag", v);
  CHECK(v.toBool());
  in.read("2nd key", v);
  CHECK(v.toInt() == 2);
  torch::serialize::InputArchive h, d;
  in.read("head", h);
  torch::Tensor b, z;
  h.read("b", b);
  CHECK(values(b) == std::vector<double>{9.0});
  h.read("deeper", d);
  d.read("z", z);
  CHECK(values(z) == std::vector<double>{1, 1, 1, 1});
}

TEST_CASE("a module saved by glassbox loads into the same libtorch module, and back") {
  TempDir tmp;
  gb::manual_seed(3);
  gb::nn::Sequential ours(gb::nn::Linear(3, 4), gb::nn::BatchNorm1d(4), gb::nn::ReLU(), gb::nn::Linear(4, 2));
  ours->forward(gb::randn({8, 3}));  // running statistics move
  gb::save(ours, tmp / "model.pt");
  torch::nn::Sequential theirs(torch::nn::Linear(3, 4), torch::nn::BatchNorm1d(4), torch::nn::ReLU(),
                               torch::nn::Linear(4, 2));
  torch::load(theirs, tmp / "model.pt");
  auto tp = theirs->named_parameters();
  for (const auto& item : ours->named_parameters()) {
    CAPTURE(item.key());
    REQUIRE(tp.contains(item.key()));
    check_same(item.value(), tp[item.key()]);
  }
  auto tb = theirs->named_buffers();
  for (const auto& item : ours->named_buffers()) {
    CAPTURE(item.key());
    REQUIRE(tb.contains(item.key()));
    check_same(item.value(), tb[item.key()]);
  }

  // libtorch saves it again; glassbox loads that into a fresh model, and as a state dict with dotted names
  torch::NoGradGuard no_grad;
  theirs->named_parameters()["0.weight"].mul_(2);
  torch::save(theirs, tmp / "theirs.pt");
  gb::nn::Sequential again(gb::nn::Linear(3, 4), gb::nn::BatchNorm1d(4), gb::nn::ReLU(), gb::nn::Linear(4, 2));
  gb::load(again, tmp / "theirs.pt");
  for (const auto& item : again->named_parameters()) check_same(item.value(), theirs->named_parameters()[item.key()]);
  check_same(again->named_buffers()["1.running_var"], theirs->named_buffers()["1.running_var"]);
  gb::StateDict sd = gb::load(tmp / "theirs.pt");
  CHECK(sd.keys() == again->state_dict().keys());

  // Module::load through an InputArchive, as libtorch code does
  gb::nn::Sequential third(gb::nn::Linear(3, 4), gb::nn::BatchNorm1d(4), gb::nn::ReLU(), gb::nn::Linear(4, 2));
  gb::serialize::InputArchive archive;
  archive.load_from(tmp / "theirs.pt");
  third->load(archive);
  CHECK(gbtest::values(third->named_parameters()["0.weight"]) == gbtest::values(again->named_parameters()["0.weight"]));
  gb::nn::Linear wrong(3, 5);
  gb::serialize::InputArchive sub;
  archive.read("0", sub);
  CHECK_THROWS_WITH_AS(wrong->load(sub),
                       doctest::Contains("the tensor 'weight' has shape [4, 3] in the archive but [5, 3] in the module"),
                       gb::Error);
}

TEST_CASE("glassbox reads what libtorch saves: tensors of every dtype, lists, values, nested archives") {
  TempDir tmp;
  std::vector<torch::Tensor> theirs = {torch::arange(6, torch::kFloat).view({2, 3}),
                                       torch::tensor({0, 200, 255}, torch::kByte),
                                       torch::tensor({-128, 5}, torch::kChar),
                                       torch::tensor({-300, 7}, torch::kShort),
                                       torch::tensor({1.5, -2.5}, torch::kHalf),
                                       torch::tensor({true, false}),
                                       torch::arange(12, torch::kDouble).view({3, 4}).t()};
  for (size_t i = 0; i < theirs.size(); ++i) {
    const std::string path = tmp / ("t" + std::to_string(i) + ".pt");
    torch::save(theirs[i], path);
    gb::Tensor t;
    gb::load(t, path);
    check_same(t, theirs[i]);
  }
  torch::save(theirs, tmp / "list.pt");
  std::vector<gb::Tensor> list;
  gb::load(list, tmp / "list.pt");
  REQUIRE(list.size() == theirs.size());
  for (size_t i = 0; i < list.size(); ++i) check_same(list[i], theirs[i]);
  gb::Tensor one;
  CHECK_THROWS_WITH_AS(gb::load(one, tmp / "list.pt"), doctest::Contains("holds a list of 7 tensors"), gb::Error);

  torch::serialize::OutputArchive out, inner;
  out.write("w", torch::ones({2}));
  out.write("epoch", c10::IValue(int64_t(12)));
  out.write("lr", c10::IValue(0.5));
  out.write("tag", c10::IValue(std::string("x")));
  out.write("done", c10::IValue(false));
  out.write("list", c10::IValue(c10::List<int64_t>({1, 2})));
  inner.write("v", torch::zeros({3}));
  out.write("inner", inner);
  out.save_to(tmp / "archive.pt");
  gb::serialize::InputArchive in;
  in.load_from(tmp / "archive.pt", gb::Device(gb::kCPU));
  CHECK(in.keys() == std::vector<std::string>{"w", "epoch", "lr", "tag", "done", "list", "inner"});
  gb::IValue v;
  in.read("epoch", v);
  CHECK(v.toInt() == 12);
  in.read("lr", v);
  CHECK(v.toDouble() == 0.5);
  in.read("tag", v);
  CHECK(v.toStringRef() == "x");
  in.read("done", v);
  CHECK_FALSE(v.toBool());
  CHECK_THROWS_WITH_AS(in.read("list", v), doctest::Contains("the key 'list' in"), gb::Error);
  CHECK_THROWS_WITH_AS(in.read("list", v), doctest::Contains("holds a list, which glassbox's archives do not read"),
                       gb::Error);
  CHECK_FALSE(in.try_read("missing", v));
  CHECK_THROWS_WITH_AS(in.read("missing", v), doctest::Contains("has no key 'missing' (it has w, epoch, lr"),
                       gb::Error);
  gb::serialize::InputArchive sub;
  in.read("inner", sub);
  gb::Tensor t;
  sub.read("v", t);
  CHECK(gbtest::values(t) == std::vector<double>{0, 0, 0});
  gb::Tensor w = gb::zeros({2});
  const void* before = w.data_ptr();
  in.read("w", w);  // into the tensor, in place
  CHECK(w.data_ptr() == before);
  CHECK(gbtest::values(w) == std::vector<double>{1, 1});
  CHECK_THROWS_WITH_AS(in.read("epoch", t), doctest::Contains("holds Int, not a tensor"), gb::Error);
}

TEST_CASE("a libtorch sampler's saved position resumes in glassbox's sampler") {
  TempDir tmp;
  torch::manual_seed(5);
  torch::data::samplers::RandomSampler theirs(12);
  theirs.next(5);
  torch::serialize::OutputArchive out;
  theirs.save(out);
  out.save_to(tmp / "sampler.pt");
  gb::data::samplers::RandomSampler ours(12);
  gb::serialize::InputArchive in;
  in.load_from(tmp / "sampler.pt");
  ours.load(in);
  CHECK(ours.index() == 5);
  auto a = ours.next(7);
  auto b = theirs.next(7);
  REQUIRE(a.has_value());
  REQUIRE(b.has_value());
  CHECK(*a == *b);
}

}  // namespace serialize_oracle
