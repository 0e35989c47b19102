// tests/engine/io/serialize_test.cpp — gb::save/gb::load on modules (reference, holder, shared_ptr; strict and
// not), the format chosen by magic bytes, map_location, and strip_prefix (PyTorch's
// consume_prefix_in_state_dict_if_present).
#include <doctest/doctest.h>

#include "engine/io/io_test_util.h"

using iotest::TempDir;
using gbtest::values;

namespace {

struct PairImpl : gb::nn::Module {
  explicit PairImpl(float v = 0) {
    w = register_parameter("w", gb::full({2, 2}, v));
    stat = register_buffer("stat", gb::full({2}, v + 1));
  }
  gb::Tensor forward(const gb::Tensor& x) { return x; }
  gb::Tensor w, stat;
};
GB_MODULE(Pair);

struct BigImpl : gb::nn::Module {
  explicit BigImpl(float v = 0) {
    p = register_module("p", Pair(v));
    extra = register_parameter("extra", gb::full({1}, v));
  }
  Pair p{nullptr};
  gb::Tensor extra;
};
GB_MODULE(Big);

}  // namespace

TEST_CASE("modules save and load through a holder, a shared_ptr or a reference") {
  TempDir dir;
  Pair a(3.0f);
  gb::save(a, dir / "a.safetensors");
  Pair b(0.0f);
  CHECK(gb::load(b, dir / "a.safetensors").empty());
  CHECK(values(b->w) == std::vector<double>{3, 3, 3, 3});
  CHECK(values(b->stat) == std::vector<double>{4, 4});

  auto ptr = std::make_shared<PairImpl>(5.0f);
  gb::save(ptr, dir / "p.safetensors", {{"who", "ptr"}});
  CHECK(gb::load_metadata(dir / "p.safetensors").at("who") == "ptr");
  PairImpl& ref = *b;
  gb::load(ref, dir / "p.safetensors");
  CHECK(values(b->w) == std::vector<double>{5, 5, 5, 5});

  // strict=false returns what did not match; strict=true throws PyTorch's message and changes nothing.
  Big big(1.0f);
  gb::save(big, dir / "big.safetensors");
  Pair c(0.0f);
  CHECK_THROWS_WITH_AS(gb::load(c, dir / "big.safetensors"), doctest::Contains("Missing key(s) in state_dict: \"w\""),
                       gb::Error);
  CHECK(values(c->w) == std::vector<double>{0, 0, 0, 0});
  gb::nn::IncompatibleKeys keys = gb::load(c, dir / "big.safetensors", /*strict=*/false);
  CHECK(keys.missing_keys == std::vector<std::string>{"w", "stat"});
  CHECK(keys.unexpected_keys == std::vector<std::string>{"extra", "p.w", "p.stat"});
  // The nested module's entries load into it once the prefix is gone.
  CHECK(c->load_state_dict(gb::strip_prefix(gb::load(dir / "big.safetensors"), "p."), false).unexpected_keys ==
        std::vector<std::string>{"extra"});
  CHECK(values(c->w) == std::vector<double>{1, 1, 1, 1});
}

TEST_CASE("load picks the format from the first bytes and maps to a device") {
  TempDir dir;
  gb::StateDict sd;
  sd.insert("x", gb::tensor({1.0f, 2.0f}));
  gb::save(sd, dir / "x.pt");  // the name does not matter: the bytes say safetensors
  CHECK(values(gb::load(dir / "x.pt")["x"]) == std::vector<double>{1, 2});
  gb::StateDict meta = gb::load(dir / "x.pt", gb::Device(gb::kMeta));
  CHECK(meta["x"].is_meta());
  CHECK(meta["x"].sizes().vec() == std::vector<int64_t>{2});

  iotest::write_bytes(dir / "zip.pt", std::string("PK\x03\x04 and nothing else", 22));
  CHECK_THROWS_WITH_AS(gb::load(dir / "zip.pt"), doctest::Contains("not a readable PyTorch zip file"), gb::Error);
  iotest::write_bytes(dir / "legacy.pt", std::string("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19", 14));
  CHECK_THROWS_WITH_AS(gb::load(dir / "legacy.pt"), doctest::Contains("legacy format"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::load(dir / "missing.safetensors"), doctest::Contains("No such file or directory"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::load(dir.path), doctest::Contains("is not a regular file"), gb::Error);
}

TEST_CASE("strip_prefix removes a DataParallel prefix and only where present") {
  gb::StateDict sd;
  sd.insert("module.fc.weight", gb::ones({2}));
  sd.insert("module.fc.bias", gb::zeros({2}));
  sd.insert("step", gb::scalar_tensor(3.0));
  sd.insert("fc.module.x", gb::ones({1}));  // "module." inside a name stays
  gb::StateDict out = gb::strip_prefix(sd);
  CHECK(out.keys() == std::vector<std::string>{"fc.weight", "fc.bias", "step", "fc.module.x"});
  CHECK(out["fc.weight"].is_same(sd["module.fc.weight"]));  // the same tensors, not copies
  CHECK(gb::strip_prefix(sd, "").keys() == sd.keys());
  CHECK(gb::strip_prefix(sd, "fc.").keys() == std::vector<std::string>{"module.fc.weight", "module.fc.bias", "step",
                                                                       "module.x"});
  gb::StateDict both;
  both.insert("module.w", gb::ones({1}));
  both.insert("w", gb::ones({1}));
  CHECK_THROWS_WITH_AS(gb::strip_prefix(both), doctest::Contains("gives 'w', which the state dict already has"),
                       gb::Error);
}

TEST_CASE("libtorch's save/load of a tensor, a list of tensors (libtorch's archives) and an optimizer; a file of "
          "another kind is refused") {
  TempDir tmp;
  gb::Tensor t = gb::arange(6, gb::kDouble).view({2, 3});
  gb::save(t, (tmp / "t.pt"));
  gb::Tensor back;
  gb::load(back, (tmp / "t.pt"));
  CHECK(gb::equal(back, t));
  CHECK(back.scalar_type() == gb::kDouble);

  gb::save(std::vector<gb::Tensor>{gb::ones({2}), gb::zeros({1, 3})}, (tmp / "list.pt"));
  std::vector<gb::Tensor> list = {gb::ones({9})};
  gb::load(list, (tmp / "list.pt"));
  REQUIRE(list.size() == 2);
  CHECK(list[1].sizes() == gb::IntArrayRef({1, 3}));

  // an optimizer's momentum survives the round trip: the next step is the same as without saving
  auto run = [&](bool through_file) {
    gb::manual_seed(4);
    gb::nn::Linear net(3, 2);
    gb::optim::SGD opt(net->parameters(), gb::optim::SGDOptions(0.1).momentum(0.9));
    gb::Tensor x = gb::randn({4, 3});
    for (int step = 0; step < 2; ++step) {
      opt.zero_grad();
      net(x).pow(2).sum().backward();
      opt.step();
    }
    if (through_file) {
      gb::save(opt, (tmp / "opt.pt"));
      gb::optim::SGD fresh(net->parameters(), gb::optim::SGDOptions(0.1).momentum(0.9));
      gb::load(fresh, (tmp / "opt.pt"));
      fresh.zero_grad();
      net(x).pow(2).sum().backward();
      fresh.step();
    } else {
      opt.zero_grad();
      net(x).pow(2).sum().backward();
      opt.step();
    }
    return values(net->weight);
  };
  CHECK(run(true) == run(false));

  CHECK_THROWS_WITH(gb::load(back, (tmp / "list.pt")),
                    doctest::Contains("the archive holds a list of 2 tensors; load it into a std::vector<gb::Tensor>"));
  gb::save(Pair(1.0f), (tmp / "module.pt"));  // libtorch's archive of the module
  CHECK_THROWS_WITH(gb::load(back, (tmp / "module.pt")), doctest::Contains("not one saved tensor (\"0\")"));
  gb::save(Pair(1.0f), (tmp / "module.safetensors"));  // safetensors: the state dict
  CHECK_THROWS_WITH(gb::load(back, (tmp / "module.safetensors")),
                    doctest::Contains("the file holds a state dict (2 tensors), not a saved tensor; read it with "
                                      "gb::load(path)"));
  // tensor files glassbox wrote as safetensors (before the archive format) still load
  gb::StateDict old;
  old.insert("tensor", gb::ones({3}));
  gb::save(old, (tmp / "old.pt"), {{"glassbox.kind", "tensor"}});
  gb::load(back, (tmp / "old.pt"));
  CHECK(back.sizes() == gb::IntArrayRef({3}));
  CHECK_THROWS_WITH(gb::save(gb::Tensor(), (tmp / "u.pt")), doctest::Contains("the tensor is undefined"));
}
