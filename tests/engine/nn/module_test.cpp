// tests/engine/nn/module_test.cpp — Module: registration, dotted names, modes, conversion, state dicts, hooks.
#include <doctest/doctest.h>

#include <sstream>

#include "glassbox/glassbox.h"

namespace {

struct LeafImpl : gb::nn::Module {
  explicit LeafImpl(int64_t n = 3) {
    weight = register_parameter("weight", gb::ones({n}));
    stats = register_buffer("stats", gb::zeros({n}));
    scratch = register_buffer("scratch", gb::zeros({1}), /*persistent=*/false);
  }
  gb::Tensor forward(const gb::Tensor& x) { return x * weight; }
  gb::Tensor weight, stats, scratch;
};
GB_MODULE(Leaf);

struct NetImpl : gb::nn::Module {
  NetImpl() {
    a = register_module("a", Leaf(3));
    b = register_module("b", Leaf(3));
    scale = register_parameter("scale", gb::full({1}, 2.0));
  }
  gb::Tensor forward(const gb::Tensor& x) { return b(a(x)) * scale; }
  Leaf a{nullptr}, b{nullptr};
  gb::Tensor scale;
};
GB_MODULE(Net);

struct OuterImpl : gb::nn::Module {
  OuterImpl() { body = register_module("body", Net()); }
  gb::Tensor forward(const gb::Tensor& x) { return body(x); }
  Net body{nullptr};
};
GB_MODULE(Outer);

}  // namespace

TEST_CASE("named_parameters, buffers and modules use PyTorch's dotted paths and order") {
  Outer net;
  CHECK(net->named_parameters().keys() ==
        std::vector<std::string>{"body.scale", "body.a.weight", "body.b.weight"});
  CHECK(net->named_buffers().keys() == std::vector<std::string>{"body.a.stats", "body.a.scratch", "body.b.stats",
                                                                 "body.b.scratch"});
  CHECK(net->named_modules().keys() == std::vector<std::string>{"", "body", "body.a", "body.b"});
  CHECK(net->named_children().keys() == std::vector<std::string>{"body"});
  CHECK(net->parameters(/*recurse=*/false).empty());
  CHECK(net->body->a->path() == "body.a");
  CHECK(net->body->a->name() == "Leaf");
  for (const auto& p : net->parameters()) CHECK(p.requires_grad());
  // state_dict: parameters then persistent buffers per module, children after
  CHECK(net->state_dict().keys() ==
        std::vector<std::string>{"body.scale", "body.a.weight", "body.a.stats", "body.b.weight", "body.b.stats"});
}

TEST_CASE("registration errors name the module and the attribute") {
  LeafImpl leaf;
  CHECK_THROWS_WITH_AS(leaf.register_parameter("weight", gb::ones({1})), doctest::Contains("'weight' already defined"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(leaf.register_parameter("a.b", gb::ones({1})), doctest::Contains("must not contain"), gb::Error);
  CHECK_THROWS_WITH_AS(leaf.register_buffer("weight", gb::ones({1})), doctest::Contains("already exists"), gb::Error);
  Leaf empty{nullptr};
  CHECK_THROWS_WITH_AS(empty->forward(gb::ones({3})), doctest::Contains("empty ModuleHolder"), gb::Error);
}

TEST_CASE("train/eval recurse; apply visits every module; zero_grad drops or zeroes") {
  Net net;
  net->eval();
  CHECK(!net->is_training());
  CHECK(!net->a->is_training());
  net->train();
  CHECK(net->b->is_training());
  int visited = 0;
  net->apply([&](gb::nn::Module&) { ++visited; });
  CHECK(visited == 3);

  net(gb::ones({3})).sum().backward();
  CHECK(net->a->weight.grad().defined());
  CHECK(net->a->weight.grad()[0].item<float>() == doctest::Approx(2.0));
  net->zero_grad(/*set_to_none=*/false);
  CHECK(net->a->weight.grad().defined());
  CHECK(net->a->weight.grad().abs().sum().item<float>() == 0.0f);
  net->zero_grad();
  CHECK(!net->a->weight.grad().defined());
}

TEST_CASE("to(dtype) converts in place: the same parameter handles see the new data") {
  Net net;
  gb::Tensor w = net->a->weight;
  net->to(gb::kDouble);
  CHECK(w.scalar_type() == gb::kDouble);
  CHECK(net->a->stats.scalar_type() == gb::kDouble);
  CHECK(w.requires_grad());
  CHECK(net->parameters()[1].unsafe_impl() == w.unsafe_impl());
  auto y = net(gb::ones({3}, gb::TensorOptions().dtype(gb::kDouble)));
  CHECK(y.scalar_type() == gb::kDouble);
}

TEST_CASE("load_state_dict copies values and reports keys with PyTorch's wording") {
  Net src, dst;
  src->a->weight.data_ptr<float>()[1] = 7.0f;
  dst->load_state_dict(src->state_dict());
  CHECK(dst->a->weight[1].item<float>() == 7.0f);
  CHECK(dst->a->weight.data_ptr() != src->a->weight.data_ptr());

  auto sd = src->state_dict();
  sd.erase("b.stats");
  sd.insert("extra", gb::ones({1}));
  try {
    dst->load_state_dict(sd);
    FAIL("strict load should throw");
  } catch (const gb::Error& e) {
    std::string m = e.what();
    CHECK(m.find("Error(s) in loading state_dict for Net:") == 0);
    CHECK(m.find("Unexpected key(s) in state_dict: \"extra\".") != std::string::npos);
    CHECK(m.find("Missing key(s) in state_dict: \"b.stats\".") != std::string::npos);
  }
  auto keys = dst->load_state_dict(sd, /*strict=*/false);
  CHECK(keys.missing_keys == std::vector<std::string>{"b.stats"});
  CHECK(keys.unexpected_keys == std::vector<std::string>{"extra"});

  auto bad = src->state_dict();
  bad.insert_or_assign("a.weight", gb::ones({4}));
  dst->a->weight.data_ptr<float>()[0] = 5.0f;
  CHECK_THROWS_WITH_AS(dst->load_state_dict(bad, false),
                       doctest::Contains("size mismatch for a.weight: copying a param with shape torch.Size([4]) from "
                                         "checkpoint, the shape in current model is torch.Size([3])."),
                       gb::Error);
  CHECK(dst->a->weight[0].item<float>() == 5.0f);  // nothing copied on error
}

TEST_CASE("forward pre-hooks and forward hooks run on module(x) and may replace values; ->forward skips them") {
  Leaf leaf(3);
  int pre = 0, post = 0;
  auto h1 = leaf->register_forward_pre_hook([&](gb::nn::Module&, const gb::variable_list&) { ++pre; });
  auto h2 = leaf->register_forward_hook(
      [&](gb::nn::Module&, const gb::variable_list&, const gb::variable_list& out) -> std::optional<gb::variable_list> {
        ++post;
        return gb::variable_list{out[0] + 1};
      });
  auto y = leaf(gb::full({3}, 2.0));
  CHECK(pre == 1);
  CHECK(post == 1);
  CHECK(y[0].item<float>() == 3.0f);
  y = leaf->forward(gb::full({3}, 2.0));
  CHECK(pre == 1);
  CHECK(y[0].item<float>() == 2.0f);
  CHECK(leaf->remove_hook(h1));
  CHECK(leaf->remove_hook(h2));
  CHECK(!leaf->remove_hook(h2));
  CHECK(!leaf->has_hooks());
}

TEST_CASE("a full backward hook sees grad_input and grad_output and can replace grad_input") {
  Leaf leaf(3);
  leaf->weight.data_ptr<float>()[0] = 3.0f;
  gb::variable_list seen_in, seen_out;
  leaf->register_full_backward_hook(
      [&](gb::nn::Module&, const gb::variable_list& gi, const gb::variable_list& go) -> std::optional<gb::variable_list> {
        seen_in = gi;
        seen_out = go;
        return gb::variable_list{gi[0] * 10};
      });
  auto x = gb::ones({3}).requires_grad_();
  (leaf(x) * 2).sum().backward();
  REQUIRE(seen_out.size() == 1);
  CHECK(seen_out[0][0].item<float>() == 2.0f);
  REQUIRE(seen_in.size() == 1);
  CHECK(seen_in[0][0].item<float>() == 6.0f);   // d(2*w*x)/dx = 2w
  CHECK(x.grad()[0].item<float>() == 60.0f);    // replaced by the hook
  CHECK(leaf->weight.grad()[0].item<float>() == 2.0f);
}

TEST_CASE("Sequential names children by index, calls them with hooks, and prints like PyTorch") {
  gb::nn::Sequential seq(Leaf(2), Leaf(2));
  seq->push_back("last", Leaf(2));
  CHECK(seq->size() == 3);
  CHECK(seq->named_parameters().keys() == std::vector<std::string>{"0.weight", "1.weight", "last.weight"});
  int calls = 0;
  seq[1]->register_forward_pre_hook([&](gb::nn::Module&, const gb::variable_list&) { ++calls; });
  auto y = seq->forward(gb::full({2}, 3.0));
  CHECK(calls == 1);
  CHECK(y[1].item<float>() == 3.0f);
  CHECK(seq->at<LeafImpl>(2).path() == "last");
  std::ostringstream os;
  os << *seq;
  CHECK(os.str() == "Sequential(\n  (0): Leaf\n  (1): Leaf\n  (last): Leaf\n)");
}

TEST_CASE("a module on the stack (libtorch's MNIST example: Net model; model.to(...); model.parameters())") {
  NetImpl model;  // not held by a shared_ptr
  CHECK(model.named_parameters().keys() == std::vector<std::string>{"scale", "a.weight", "b.weight"});
  CHECK(model.named_buffers().keys() == std::vector<std::string>{"a.stats", "a.scratch", "b.stats", "b.scratch"});
  model.to(gb::kDouble);
  CHECK(model.a->weight.scalar_type() == gb::kDouble);
  model.to(gb::Device(gb::kCPU));
  int visited = 0;
  model.apply([&](gb::nn::Module&) { ++visited; });
  CHECK(visited == 3);
  std::vector<std::string> paths;
  model.apply([&](const std::string& path, gb::nn::Module&) { paths.push_back(path); }, "net");
  CHECK(paths == std::vector<std::string>{"net", "net.a", "net.b"});
  model.eval();
  CHECK_FALSE(model.b->is_training());
  gb::optim::SGD opt(model.parameters(), gb::optim::SGDOptions(0.1));
  model.forward(gb::ones({3}, gb::kDouble)).sum().backward();
  opt.step();
  CHECK(model.scale.item<double>() == doctest::Approx(2.0 - 0.1 * 3));
  model.zero_grad();
  // what needs the module as a shared_ptr says so, as libtorch's does
  CHECK_THROWS_WITH(model.modules(), doctest::Contains("need the module held by a std::shared_ptr"));
  CHECK(model.modules(/*include_self=*/false).size() == 2);
}
