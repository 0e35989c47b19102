// tests/engine/cuda/optim_gpu_test.cpp — GPU tier: Adam's and AdamW's fused update on cuda (engine/cuda/optim.cu)
// against the cpu's fused pass: the same bits for the parameters and both moments after three steps, with weight
// decay, amsgrad and maximize, over more parameters than one launch takes.
#include "support/check.h"

using gbtest::kGpu;

namespace {

// Three steps of make_opt's optimizer over the same 30 parameters and gradients on the cpu and on cuda.
template <class MakeOpt>
void check_same_bits(MakeOpt make_opt) {
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
    CHECK(gb::equal(pg[i].detach().cpu(), pc[i].detach()));
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
