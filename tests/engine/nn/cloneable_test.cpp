// tests/engine/nn/cloneable_test.cpp — Module::clone: built-in modules and containers rebuilt from their options
// with their own tensors holding the same values, Cloneable<Derived> modules of one's own (libtorch's idiom), and
// the refusals (a plain Module; a reset() that does not register what the original has).
#include <doctest/doctest.h>

#include <sstream>

#include "glassbox/glassbox.h"
#include "support/check.h"

using gbtest::values;

namespace {

// libtorch's Cloneable idiom: every parameter, buffer and child registered in reset(); plain members copied.
struct QNetImpl : gb::nn::Cloneable<QNetImpl> {
  explicit QNetImpl(int64_t hidden) : hidden(hidden) { reset(); }
  void reset() override {
    body = register_module("body", gb::nn::Sequential(gb::nn::Linear(4, hidden), gb::nn::ReLU()));
    head = register_module("head", gb::nn::Linear(hidden, 2));
    scale = register_parameter("scale", gb::ones({1}));
    steps = register_buffer("steps", gb::zeros({1}, gb::kLong));
  }
  gb::Tensor forward(const gb::Tensor& x) { return head(body->forward(x)) * scale; }
  int64_t hidden;
  gb::nn::Sequential body{nullptr};
  gb::nn::Linear head{nullptr};
  gb::Tensor scale, steps;
};
GB_MODULE(QNet);

// Registers in the constructor only: its reset() does not rebuild what clone() needs.
struct ForgetfulImpl : gb::nn::Cloneable<ForgetfulImpl> {
  ForgetfulImpl() { w = register_parameter("w", gb::ones({2})); }
  void reset() override {}
  gb::Tensor w;
};
GB_MODULE(Forgetful);

struct PlainImpl : gb::nn::Module {
  PlainImpl() { fc = register_module("fc", gb::nn::Linear(2, 2)); }
  gb::nn::Linear fc{nullptr};
};
GB_MODULE(Plain);

void check_independent(const gb::nn::Module& a, const gb::nn::Module& b) {
  auto pa = a.named_parameters(), pb = b.named_parameters();
  REQUIRE(pa.keys() == pb.keys());
  for (size_t i = 0; i < pa.size(); ++i) {
    CAPTURE(pa[i].key());
    CHECK(values(pa[i].value()) == values(pb[i].value()));
    CHECK(pa[i].value().data_ptr() != pb[i].value().data_ptr());
    CHECK(pa[i].value().requires_grad() == pb[i].value().requires_grad());
    CHECK(pa[i].value().scalar_type() == pb[i].value().scalar_type());
  }
  auto ba = a.named_buffers(), bb = b.named_buffers();
  REQUIRE(ba.keys() == bb.keys());
  for (size_t i = 0; i < ba.size(); ++i) CHECK(values(ba[i].value()) == values(bb[i].value()));
}

}  // namespace

TEST_CASE("built-in modules clone with their own tensors, values, modes and configuration") {
  gb::manual_seed(1);
  gb::nn::Linear fc(gb::nn::LinearOptions(3, 2).bias(false));
  fc->weight.requires_grad_(false);  // frozen: the copy stays frozen
  auto copy = std::dynamic_pointer_cast<gb::nn::LinearImpl>(fc->clone());
  REQUIRE(copy != nullptr);
  CHECK_FALSE(copy->options.bias());
  CHECK_FALSE(copy->bias.defined());
  check_independent(*fc, *copy);
  copy->weight.add_(1.0);  // the clone's member is its registered parameter
  CHECK(values(copy->named_parameters()["weight"]) == values(copy->weight));
  CHECK(values(fc->weight) != values(copy->weight));

  gb::nn::Sequential net(gb::nn::Conv2d(gb::nn::Conv2dOptions(1, 2, 3)), gb::nn::BatchNorm2d(2), gb::nn::ReLU(),
                         gb::nn::Flatten(), gb::nn::Dropout(0.5), gb::nn::Linear(8, 3));
  auto x = gb::randn({4, 1, 4, 4});
  net->forward(x).sum().backward();  // running stats move, gradients exist
  net->eval();
  auto twin = std::dynamic_pointer_cast<gb::nn::SequentialImpl>(net->clone());
  REQUIRE(twin != nullptr);
  check_independent(*net, *twin);
  CHECK_FALSE(twin->is_training());
  CHECK_FALSE(twin->ptr(4)->is_training());
  CHECK_FALSE(twin->named_parameters()["5.weight"].grad().defined());  // gradients are not copied
  CHECK(values(twin->forward(x)) == values(net->forward(x)));
  std::ostringstream a, b;
  a << *net;
  b << *twin;
  CHECK(a.str() == b.str());

  gb::nn::LSTM lstm(gb::nn::LSTMOptions(3, 4).num_layers(2).bidirectional(true));
  lstm->to(gb::kDouble);
  auto lcopy = std::dynamic_pointer_cast<gb::nn::LSTMImpl>(lstm->clone(gb::Device(gb::kCPU)));
  check_independent(*lstm, *lcopy);
  auto seq = gb::randn({5, 2, 3}, gb::kDouble);
  CHECK(values(std::get<0>(lcopy->forward(seq))) == values(std::get<0>(lstm->forward(seq))));

  gb::nn::ModuleList list(gb::nn::Linear(2, 2), gb::nn::Functional(gb::relu));
  auto lc = std::dynamic_pointer_cast<gb::nn::ModuleListImpl>(list->clone());
  REQUIRE(lc->size() == 2);
  check_independent(*list, *lc);
  CHECK(values(lc->at<gb::nn::FunctionalImpl>(1)(gb::tensor({-1.0f, 2.0f}))) == std::vector<double>{0, 2});
  gb::nn::ModuleDict dict({{"a", gb::nn::Linear(2, 3)}});
  auto dc = std::dynamic_pointer_cast<gb::nn::ModuleDictImpl>(dict->clone());
  CHECK(dc->keys() == std::vector<std::string>{"a"});
  check_independent(*dict, *dc);
}

TEST_CASE("a Cloneable module of one's own clones deeply; training the clone leaves the original") {
  gb::manual_seed(2);
  QNet online(8);
  online->steps.fill_(7);
  auto target = std::dynamic_pointer_cast<QNetImpl>(online->clone());
  REQUIRE(target != nullptr);
  CHECK(target->hidden == 8);
  check_independent(*online, *target);
  CHECK(target->steps.item<int64_t>() == 7);
  CHECK(target->body.ptr() != online->body.ptr());  // the member holders name the new children
  CHECK(target->named_parameters()["body.0.weight"].data_ptr() == target->body->named_parameters()["0.weight"].data_ptr());
  auto x = gb::randn({5, 4});
  auto before = values(online->forward(x));
  CHECK(values(target->forward(x)) == before);
  gb::optim::SGD opt(target->parameters(), 0.1);
  target->forward(x).pow(2).sum().backward();
  opt.step();
  CHECK(values(online->forward(x)) == before);
  CHECK(values(target->forward(x)) != before);
}

TEST_CASE("clone refuses a plain Module and a reset() that does not register what the original has") {
  Plain plain;
  CHECK_THROWS_WITH_AS(plain->clone(), doctest::Contains("clone() has not been implemented for Plain. Subclass "
                                                         "gb::nn::Cloneable<PlainImpl>"),
                       gb::Error);
  Forgetful f;
  CHECK_THROWS_WITH_AS(f->clone(), doctest::Contains("the copy registered the parameters [] but the original has [w]"),
                       gb::Error);
}
