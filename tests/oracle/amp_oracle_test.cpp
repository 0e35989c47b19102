// tests/oracle/amp_oracle_test.cpp — CPU autocast against libtorch 1.13's (at::autocast with bfloat16): the
// output dtype of each op glassbox has a policy for, and the values of the lower-precision ops.
//
// Where the two agree (the lower-precision list, cat/stack, the losses in PyTorch's CPU fp32 list) the dtypes
// must match and lower-precision results must agree to a bf16 rounding. glassbox deliberately uses PyTorch's CUDA
// fp32 list on CPU too (softmax, layer_norm, exp, sum, ... run in fp32): for those, the test pins libtorch 1.13's
// CPU answer (the input's bf16) next to glassbox's fp32, so the documented difference is checked, not assumed.
#include <ATen/autocast_mode.h>
#include <glassbox/glassbox.h>
#include <torch/torch.h>

#include <functional>

#include "glassbox/amp/autocast.h"
#include "support/check.h"

// This file's names, apart from the other oracle files' (the folder builds as one translation unit).
namespace amp_oracle {

namespace {

torch::Tensor to_torch(const gb::Tensor& t) {
  gb::Tensor c = t.detach().to(gb::kFloat).contiguous();
  torch::Tensor f = torch::from_blob(c.data_ptr(), c.sizes().vec(), torch::kFloat).clone();
  if (t.scalar_type() == gb::kBFloat16) return f.to(torch::kBFloat16);
  if (t.scalar_type() == gb::kInt64) return f.to(torch::kLong);
  return f;
}

gb::Tensor to_gb_double(const torch::Tensor& t) {
  torch::Tensor c = t.detach().to(torch::kDouble).contiguous();
  std::vector<int64_t> sizes(c.sizes().begin(), c.sizes().end());
  return gb::from_blob(c.data_ptr(), sizes, gb::kFloat64).clone();
}

gb::ScalarType gb_dtype(torch::ScalarType t) {
  switch (t) {
    case torch::kFloat:
      return gb::kFloat;
    case torch::kBFloat16:
      return gb::kBFloat16;
    case torch::kHalf:
      return gb::kHalf;
    case torch::kDouble:
      return gb::kDouble;
    default:
      return gb::kInt64;
  }
}

// libtorch's CPU autocast region (what torch.autocast("cpu") does on entry and exit).
struct TorchAutocast {
  TorchAutocast() {
    at::autocast::set_cpu_enabled(true);
    at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
    at::autocast::increment_nesting();
  }
  ~TorchAutocast() {
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    at::autocast::set_cpu_enabled(false);
  }
};

struct Inputs {
  gb::Tensor x, h, w, b, img, k, target, zeros;
  torch::Tensor tx, th, tw, tb, timg, tk, ttarget, tzeros;
};

Inputs make_inputs() {
  Inputs in;
  gb::manual_seed(0);
  in.x = gb::randn({4, 8});
  in.h = gb::randn({4, 8}).to(gb::kBFloat16);
  in.w = gb::randn({6, 8}).requires_grad_(true);
  in.b = gb::randn({6}).requires_grad_(true);
  in.img = gb::randn({2, 3, 6, 6});
  in.k = gb::randn({4, 3, 3, 3});
  in.target = gb::tensor({0, 1, 2, 3}).to(gb::kInt64);
  in.zeros = gb::zeros({4, 8});
  in.tx = to_torch(in.x);
  in.th = to_torch(in.h);
  in.tw = to_torch(in.w).requires_grad_(true);
  in.tb = to_torch(in.b).requires_grad_(true);
  in.timg = to_torch(in.img);
  in.tk = to_torch(in.k);
  in.ttarget = to_torch(in.target);
  in.tzeros = to_torch(in.zeros);
  return in;
}

enum class Expect { same, gb_fp32_torch_bf16 };

struct Case {
  const char* name;
  Expect expect;
  bool compare_values;
  std::function<gb::Tensor(const Inputs&)> ours;
  std::function<torch::Tensor(const Inputs&)> theirs;
};

std::vector<Case> cases() {
  namespace TF = torch::nn::functional;
  return {
      {"linear", Expect::same, true, [](const Inputs& i) { return gb::linear(i.x, i.w, i.b); },
       [](const Inputs& i) { return torch::linear(i.tx, i.tw, i.tb); }},
      {"mm", Expect::same, true, [](const Inputs& i) { return gb::mm(i.x, i.w.t()); },
       [](const Inputs& i) { return torch::mm(i.tx, i.tw.t()); }},
      {"matmul", Expect::same, true, [](const Inputs& i) { return gb::matmul(i.x, i.w.t()); },
       [](const Inputs& i) { return torch::matmul(i.tx, i.tw.t()); }},
      {"bmm", Expect::same, true, [](const Inputs& i) { return gb::bmm(i.x.unsqueeze(0), i.w.t().unsqueeze(0)); },
       [](const Inputs& i) { return torch::bmm(i.tx.unsqueeze(0), i.tw.t().unsqueeze(0)); }},
      {"addmm", Expect::same, true, [](const Inputs& i) { return gb::addmm(i.b, i.x, i.w.t()); },
       [](const Inputs& i) { return torch::addmm(i.tb, i.tx, i.tw.t()); }},
      {"conv2d", Expect::same, true, [](const Inputs& i) { return gb::conv2d(i.img, i.k); },
       [](const Inputs& i) { return torch::conv2d(i.timg, i.tk); }},
      {"cat", Expect::same, true,
       [](const Inputs& i) {
         return gb::cat({i.h, i.x});
       },
       [](const Inputs& i) {
         return torch::cat({i.th, i.tx});
       }},
      {"stack", Expect::same, true,
       [](const Inputs& i) {
         return gb::stack({i.h, i.x});
       },
       [](const Inputs& i) {
         return torch::stack({i.th, i.tx});
       }},
      {"mse_loss", Expect::same, false, [](const Inputs& i) { return gb::mse_loss(i.h, i.zeros); },
       [](const Inputs& i) { return torch::mse_loss(i.th, i.tzeros); }},
      {"nll_loss", Expect::same, false, [](const Inputs& i) { return gb::nll_loss(i.h, i.target); },
       [](const Inputs& i) { return torch::nll_loss(i.th, i.ttarget); }},
      {"l1_loss", Expect::same, false, [](const Inputs& i) { return gb::l1_loss(i.h, i.zeros); },
       [](const Inputs& i) { return torch::l1_loss(i.th, i.tzeros); }},
      {"prod", Expect::same, false, [](const Inputs& i) { return gb::prod(i.h); },
       [](const Inputs& i) { return torch::prod(i.th); }},
      {"softmax", Expect::gb_fp32_torch_bf16, false, [](const Inputs& i) { return gb::softmax(i.h, 1); },
       [](const Inputs& i) { return torch::softmax(i.th, 1); }},
      {"log_softmax", Expect::gb_fp32_torch_bf16, false, [](const Inputs& i) { return gb::log_softmax(i.h, 1); },
       [](const Inputs& i) { return torch::log_softmax(i.th, 1); }},
      {"layer_norm", Expect::gb_fp32_torch_bf16, false, [](const Inputs& i) { return gb::layer_norm(i.h, {8}); },
       [](const Inputs& i) { return torch::layer_norm(i.th, {8}); }},
      {"exp", Expect::gb_fp32_torch_bf16, false, [](const Inputs& i) { return gb::exp(i.h); },
       [](const Inputs& i) { return torch::exp(i.th); }},
      {"sum", Expect::gb_fp32_torch_bf16, false, [](const Inputs& i) { return gb::sum(i.h); },
       [](const Inputs& i) { return torch::sum(i.th); }},
      {"pow", Expect::gb_fp32_torch_bf16, false, [](const Inputs& i) { return gb::pow(i.h, 2); },
       [](const Inputs& i) { return torch::pow(i.th, 2); }},
      {"cross_entropy", Expect::same, false, [](const Inputs& i) { return gb::cross_entropy(i.h, i.target); },
       [](const Inputs& i) { return torch::nn::functional::cross_entropy(i.th, i.ttarget); }},
      {"binary_cross_entropy_with_logits", Expect::same, false,
       [](const Inputs& i) { return gb::binary_cross_entropy_with_logits(i.h, i.zeros); },
       [](const Inputs& i) { return torch::binary_cross_entropy_with_logits(i.th, i.tzeros); }},
  };
}

}  // namespace

TEST_CASE("CPU autocast (bfloat16): output dtypes and lower-precision values against libtorch") {
  torch::set_num_threads(1);
  Inputs in = make_inputs();
  for (const Case& c : cases()) {
    std::string name = c.name;
    CAPTURE(name);
    gb::Tensor ours;
    torch::Tensor theirs;
    {
      gb::autocast ac(gb::kCPU);
      ours = c.ours(in);
    }
    {
      TorchAutocast ac;
      theirs = c.theirs(in);
    }
    gb::ScalarType their_dtype = gb_dtype(theirs.scalar_type());
    std::string line =
        name + ": glassbox " + gb::to_string(ours.scalar_type()) + ", libtorch " + gb::to_string(their_dtype);
    MESSAGE(line);
    if (c.expect == Expect::same) {
      CHECK(ours.scalar_type() == their_dtype);
    } else {
      CHECK(ours.scalar_type() == gb::kFloat);
      CHECK(their_dtype == gb::kBFloat16);
    }
    if (c.compare_values) {
      gb::Tensor a = ours.to(gb::kDouble), b = to_gb_double(theirs);
      double max_abs = (a - b).abs().max().item<double>();
      double scale = b.abs().max().item<double>();
      std::string diff = name + ": max |glassbox - libtorch| = " + std::to_string(max_abs) + " (max |value| " +
                         std::to_string(scale) + ")";
      MESSAGE(diff);
      CHECK(max_abs <= scale / 128);  // one bf16 ulp at the largest magnitude
    }
  }
}

}  // namespace amp_oracle
