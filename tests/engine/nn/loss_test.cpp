// tests/engine/nn/loss_test.cpp — the loss modules: each forward equals its function with the module's options,
// weight and pos_weight are buffers (state_dict, to(dtype)), the holders construct as libtorch's do, printing,
// gradients through a module call.
#include <doctest/doctest.h>

#include <sstream>

#include "glassbox/glassbox.h"
#include "support/check.h"

namespace nn = gb::nn;
using gbtest::check_close;

namespace {
template <typename M>
std::string repr(const M& m) {
  std::ostringstream os;
  os << m;
  return os.str();
}
}  // namespace

TEST_CASE("pointwise loss modules equal their functions") {
  gb::manual_seed(31);
  auto x = gb::randn({4, 3}, gb::kFloat64), y = gb::randn({4, 3}, gb::kFloat64);
  nn::MSELoss mse;
  check_close(mse(x, y), gb::mse_loss(x, y), 1e-12, 1e-12);
  nn::MSELoss mse_sum(gb::kSum);  // libtorch: MSELoss(torch::kSum) through MSELossOptions' constructor
  check_close(mse_sum(x, y), gb::mse_loss(x, y, gb::kSum), 1e-12, 1e-12);
  nn::L1Loss l1{nn::L1LossOptions(gb::kNone)};  // braces: Clang reads the parentheses as a declaration
  check_close(l1(x, y), gb::l1_loss(x, y, gb::kNone), 1e-12, 1e-12);
  nn::SmoothL1Loss sl1(nn::SmoothL1LossOptions().beta(0.5).reduction(gb::kSum));
  check_close(sl1(x, y), gb::smooth_l1_loss(x, y, gb::kSum, 0.5), 1e-12, 1e-12);
  nn::HuberLoss hub(nn::HuberLossOptions().delta(0.3));
  check_close(hub(x, y), gb::huber_loss(x, y, gb::kMean, 0.3), 1e-12, 1e-12);
  auto lq = x.log_softmax(1), p = y.softmax(1);
  nn::KLDivLoss kl{nn::KLDivLossOptions(gb::kBatchMean)};
  check_close(kl(lq, p), gb::kl_div(lq, p, gb::kSum) / 4, 1e-12, 1e-12);
  nn::KLDivLoss kl_log(nn::KLDivLossOptions().log_target(true).reduction(gb::kNone));
  check_close(kl_log(lq, p.log()), gb::kl_div(lq, p.log(), gb::kNone, true), 1e-12, 1e-12);
  CHECK(kl->options.reduction().is_batchmean());
  CHECK(kl_log->options.reduction() == nn::KLDivReduction(gb::kNone));
  CHECK(mse->parameters().empty());
  CHECK(mse->named_buffers().is_empty());
}

TEST_CASE("class and binary loss modules: weight and pos_weight are buffers") {
  gb::manual_seed(32);
  auto logits = gb::randn({5, 3}, gb::kFloat64);
  auto target = gb::randint(0, 3, {5});
  auto w = gb::tensor({1.0, 2.0, 0.5}, gb::kFloat64);
  nn::CrossEntropyLoss ce(nn::CrossEntropyLossOptions().weight(w).label_smoothing(0.1).ignore_index(1));
  check_close(ce(logits, target), gb::cross_entropy(logits, target, w, gb::kMean, 1, 0.1), 1e-12, 1e-12);
  CHECK(ce->named_buffers().keys() == std::vector<std::string>{"weight"});
  CHECK(ce->state_dict().contains("weight"));
  nn::CrossEntropyLoss plain;
  CHECK(plain->named_buffers().is_empty());  // an undefined weight is no buffer
  check_close(plain(logits, target), gb::cross_entropy(logits, target), 1e-12, 1e-12);
  nn::NLLLoss nll(nn::NLLLossOptions().weight(w).reduction(gb::kSum));
  check_close(nll(logits.log_softmax(1), target), gb::nll_loss(logits.log_softmax(1), target, w, gb::kSum), 1e-12,
              1e-12);
  auto prob = gb::rand({5, 3}, gb::kFloat64) * 0.8 + 0.1, t = gb::rand({5, 3}, gb::kFloat64);
  nn::BCELoss bce(nn::BCELossOptions().weight(w));
  check_close(bce(prob, t), gb::binary_cross_entropy(prob, t, w), 1e-12, 1e-12);
  auto pw = gb::tensor({2.0, 1.0, 3.0}, gb::kFloat64);
  nn::BCEWithLogitsLoss bcel(nn::BCEWithLogitsLossOptions().pos_weight(pw).weight(w).reduction(gb::kSum));
  check_close(bcel(logits, t), gb::binary_cross_entropy_with_logits(logits, t, w, pw, gb::kSum), 1e-12, 1e-12);
  CHECK(bcel->named_buffers().keys() == std::vector<std::string>{"weight", "pos_weight"});
  // the buffers follow to(dtype), and forward uses them
  bcel->to(gb::kFloat);
  CHECK(bcel->weight.scalar_type() == gb::kFloat);
  CHECK(bcel->pos_weight.scalar_type() == gb::kFloat);
  CHECK(bcel(logits.to(gb::kFloat), t.to(gb::kFloat)).scalar_type() == gb::kFloat);
}

TEST_CASE("loss modules: gradients through a module call, printing, use in a model") {
  gb::manual_seed(33);
  auto x = gb::randn({4, 3}, gbtest::f64_grad());
  auto t = gb::randint(0, 3, {4});
  nn::CrossEntropyLoss ce;
  auto loss = ce(x, t);
  CHECK(loss.dim() == 0);
  loss.backward();
  check_close(x.grad(), (x.detach().softmax(1) - gb::one_hot(t, 3).to(gb::kFloat64)) / 4, 1e-12, 1e-12);
  CHECK(repr(ce) == "CrossEntropyLoss()");
  CHECK(repr(nn::MSELoss()) == "MSELoss()");
  CHECK(repr(nn::BCEWithLogitsLoss()) == "BCEWithLogitsLoss()");
  CHECK(repr(nn::KLDivLoss()) == "KLDivLoss()");
  CHECK(nn::HuberLoss()->name() == "HuberLoss");
  // registered as a submodule like any other: it shows in the tree and adds no parameters
  struct NetImpl : nn::Module {
    NetImpl() {
      fc = register_module("fc", nn::Linear(3, 2));
      criterion = register_module("criterion", nn::SmoothL1Loss());
    }
    nn::Linear fc{nullptr};
    nn::SmoothL1Loss criterion{nullptr};
  };
  auto net = std::make_shared<NetImpl>();
  CHECK(net->parameters().size() == 2);
  auto y = net->criterion(net->fc(x.detach().to(gb::kFloat)), gb::zeros({4, 2}));
  y.backward();
  CHECK(net->fc->weight.grad().defined());
  CHECK(repr(*net).find("(criterion): SmoothL1Loss()") != std::string::npos);
}
