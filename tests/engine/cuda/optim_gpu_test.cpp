// tests/engine/cuda/optim_gpu_test.cpp — GPU tier: Adam's, AdamW's, SGD's, RMSprop's and Adagrad's fused updates
// on cuda (engine/cuda/optim.cu) against the cpu's fused passes: the same bits for the parameters after three steps,
// with weight decay, amsgrad, maximize, momentum, dampening, Nesterov, centered and lr decay, over more parameters
// than one launch takes.
#include "support/check.h"

using gbtest::kGpu;

namespace {

// Three steps of make_opt's optimizer over the same 30 parameters and gradients on the cpu and on cuda: the same
// bits, or within one float rounding where a step ran as ops (SGD's first step with momentum makes the buffer: its
// pointwise kernels may contract a multiply-add that the cpu rounds twice).
template <class MakeOpt>
void check_same_bits(MakeOpt make_opt, bool exact = true) {
  gb::manual_seed(111);
  std::vector<gb::Tensor> pc, pg;
  for (int i = 0; i < 30; ++i) {
    gb::Tensor p = gb::randn({i % 7 + 1, 33});
    pc.push_back(p.clone().requires_grad_());
    pg.push_back(p.to(kGpu).requires_grad_());
  }
  auto oc = make_opt(pc), og = make_opt(pg);
  for (int step = 0; step < 3; ++step) {
    for (size_t i = 0; i < pc.size(); ++i) {
      gb::Tensor g = gb::randn(pc[i].sizes());
      pc[i].mutable_grad() = g;
      pg[i].mutable_grad() = g.to(kGpu);
    }
    oc.step();
    og.step();
  }
  for (size_t i = 0; i < pc.size(); ++i) {
    CAPTURE(i);
    if (exact)
      CHECK(gb::equal(pg[i].detach().cpu(), pc[i].detach()));
    else
      gbtest::check_close(pg[i].detach(), pc[i].detach(), 1e-6, 1e-6);
  }
}

}  // namespace

TEST_CASE("Adam and AdamW on cuda give the cpu's fused pass's bits") {
  check_same_bits([](std::vector<gb::Tensor> ps) { return gb::optim::Adam(ps, gb::optim::AdamOptions(1e-2)); });
  check_same_bits([](std::vector<gb::Tensor> ps) {
    return gb::optim::Adam(ps, gb::optim::AdamOptions(1e-2).weight_decay(0.1).amsgrad(true));
  });
  check_same_bits([](std::vector<gb::Tensor> ps) {
    return gb::optim::AdamW(ps, gb::optim::AdamWOptions(1e-2).weight_decay(0.05));
  });
  check_same_bits([](std::vector<gb::Tensor> ps) {
    return gb::optim::AdamW(ps, gb::optim::AdamWOptions(1e-2).amsgrad(true).maximize(true));
  });
}

TEST_CASE("SGD on cuda gives the cpu's fused pass's bits") {
  check_same_bits([](std::vector<gb::Tensor> ps) { return gb::optim::SGD(ps, gb::optim::SGDOptions(0.1)); });
  check_same_bits(
      [](std::vector<gb::Tensor> ps) {
        return gb::optim::SGD(ps, gb::optim::SGDOptions(0.1).momentum(0.9).weight_decay(1e-3));
      },
      false);
  check_same_bits(
      [](std::vector<gb::Tensor> ps) {
        return gb::optim::SGD(ps, gb::optim::SGDOptions(0.1).momentum(0.9).nesterov(true));
      },
      false);
  check_same_bits(
      [](std::vector<gb::Tensor> ps) {
        return gb::optim::SGD(ps, gb::optim::SGDOptions(0.1).momentum(0.5).dampening(0.2).maximize(true));
      },
      false);
}

TEST_CASE("RMSprop and Adagrad on cuda give the cpu's fused pass's bits, every variant") {
  check_same_bits([](std::vector<gb::Tensor> ps) { return gb::optim::RMSprop(ps, gb::optim::RMSpropOptions(1e-2)); });
  check_same_bits([](std::vector<gb::Tensor> ps) {
    return gb::optim::RMSprop(ps, gb::optim::RMSpropOptions(1e-2).weight_decay(0.1).centered(true));
  });
  check_same_bits([](std::vector<gb::Tensor> ps) {
    return gb::optim::RMSprop(ps, gb::optim::RMSpropOptions(1e-2).momentum(0.9).centered(true).maximize(true));
  });
  check_same_bits([](std::vector<gb::Tensor> ps) {
    return gb::optim::RMSprop(ps, gb::optim::RMSpropOptions(1e-2).momentum(0.5).weight_decay(1e-3));
  });
  check_same_bits([](std::vector<gb::Tensor> ps) { return gb::optim::Adagrad(ps, gb::optim::AdagradOptions(0.1)); });
  check_same_bits([](std::vector<gb::Tensor> ps) {
    return gb::optim::Adagrad(ps, gb::optim::AdagradOptions(0.1).lr_decay(0.01).weight_decay(0.1).maximize(true));
  });
}
