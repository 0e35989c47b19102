// tests/porting/everyday.cpp — a hundred everyday libtorch calls in one training script, as forum answers and
// tutorials write them, each result checked. Never compiled as it stands: tests/CMakeLists.txt renames a copy with
// tools/port.sh and builds it against glassbox (it also builds and passes against libtorch 1.13 itself).
#include <torch/torch.h>

#include <cmath>
#include <iostream>
#include <tuple>
#include <vector>

namespace F = torch::nn::functional;

namespace {

struct NetImpl : torch::nn::Module {
  NetImpl() {
    conv = register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 4, 3).stride(1).padding(1)));
    bn = register_module("bn", torch::nn::BatchNorm2d(4));
    fc = register_module("fc", torch::nn::Linear(4 * 4 * 4, 10));
    emb = register_module("emb", torch::nn::Embedding(10, 8));
    ln = register_module("ln", torch::nn::LayerNorm(torch::nn::LayerNormOptions({8})));
  }
  torch::Tensor forward(torch::Tensor x) {
    x = F::max_pool2d(torch::relu(bn(conv(x))), F::MaxPool2dFuncOptions(2));
    x = x.view({x.size(0), -1});
    x = F::dropout(x, F::DropoutFuncOptions().p(0.1).training(is_training()));
    return fc(x);
  }
  torch::nn::Conv2d conv{nullptr};
  torch::nn::BatchNorm2d bn{nullptr};
  torch::nn::Linear fc{nullptr};
  torch::nn::Embedding emb{nullptr};
  torch::nn::LayerNorm ln{nullptr};
};
TORCH_MODULE(Net);

bool near(double a, double b, double tol = 1e-5) { return std::abs(a - b) <= tol * (1 + std::abs(b)); }

void training_step() {
  torch::manual_seed(42);
  torch::Device device(torch::cuda::is_available() ? torch::kCUDA : torch::kCPU);
  Net net;
  net->to(device);
  int64_t parameters = 0;
  for (auto& p : net->named_parameters()) parameters += p.value().numel();
  TORCH_CHECK(parameters == 4 * 9 + 4 + 8 + 64 * 10 + 10 + 80 + 16, "named_parameters");
  torch::nn::init::xavier_uniform_(net->fc->weight);
  torch::nn::init::zeros_(net->fc->bias);
  int modules = 0;
  net->apply([&](torch::nn::Module&) { ++modules; });
  TORCH_CHECK(modules == 6, "apply visits the module and its children");
  torch::optim::Adam opt(net->parameters(), torch::optim::AdamOptions(1e-3).weight_decay(1e-4));
  torch::optim::StepLR sched(opt, 1, 0.5);
  static_cast<torch::optim::AdamOptions&>(opt.param_groups()[0].options()).lr(1e-2);
  auto x = torch::randn({8, 1, 8, 8}, device);
  auto y = torch::randint(0, 10, {8}, torch::TensorOptions().dtype(torch::kLong).device(device));
  net->train();
  float first = 0, last = 0;
  for (int step = 0; step < 40; ++step) {
    opt.zero_grad();
    auto out = net->forward(x);
    auto loss = F::cross_entropy(out, y, F::CrossEntropyFuncOptions().label_smoothing(0.1));
    loss.backward();
    torch::nn::utils::clip_grad_norm_(net->parameters(), 1.0);
    opt.step();
    if (step == 0) first = loss.item<float>();
    last = loss.item<float>();
  }
  sched.step();  // libtorch's first step() only counts; glassbox's (Python's) halves already: docs/PORTING.md
  sched.step();
  TORCH_CHECK(static_cast<torch::optim::AdamOptions&>(opt.param_groups()[0].options()).lr() < 1e-2,
              "StepLR lowers the learning rate");
  TORCH_CHECK(last < first, "the loss falls");
  {
    torch::NoGradGuard no_grad;
    net->eval();
    auto probs = torch::softmax(net->forward(x), 1);
    auto correct = std::get<1>(probs.max(1)).eq(y).sum().item<int64_t>();
    std::cout << "eval accuracy on the batch: " << correct << "/8" << std::endl;
    TORCH_CHECK(correct >= 6, "the batch is learned");
  }
  {
    torch::InferenceMode guard;
    TORCH_CHECK(!net->forward(x).requires_grad(), "InferenceMode records nothing");
  }
  auto emb = net->emb(torch::tensor({1, 2, 3}));
  auto normed = net->ln(emb);
  TORCH_CHECK(std::abs(normed.mean().item<float>()) < 1e-5f, "LayerNorm");
  std::cout << "training: loss " << first << " -> " << last << std::endl;
}

void tensor_calls() {
  torch::manual_seed(1);
  auto a = torch::tensor({{1, 2}, {3, 4}});
  auto b = torch::tensor({{1.5, 2.5}, {3.5, 4.5}});
  TORCH_CHECK(a.scalar_type() == torch::kLong && b.scalar_type() == torch::kFloat, "torch::tensor infers dtypes");
  std::ostringstream names;
  names << a.scalar_type();
  TORCH_CHECK(names.str() == "Long", "printing a ScalarType");
  auto e = torch::eye(3);
  auto l = torch::linspace(0, 1, 5);
  auto r = torch::arange(0, 10, 2);
  auto f = torch::full({2, 2}, 7);
  TORCH_CHECK(e.sum().item<float>() == 3 && r.numel() == 5 && f.sum().item<float>() == 28, "factories");
  auto w = torch::where(l > 0.5, l, torch::zeros_like(l));
  TORCH_CHECK(near(w.sum().item<float>(), 1.75), "where");
  auto tri = torch::triu(torch::ones({3, 3}), 1);
  TORCH_CHECK(tri.sum().item<float>() == 3 && torch::tril(torch::ones({3, 3})).sum().item<float>() == 6, "triu/tril");
  auto masked = torch::zeros({3, 3}).masked_fill(tri.to(torch::kBool), -1e9);
  TORCH_CHECK(masked[0][2].item<float>() < -1e8, "a causal mask");
  auto m = torch::matmul(e, torch::ones({3, 2})).t().contiguous();
  TORCH_CHECK(m.sizes() == torch::IntArrayRef({2, 3}), "matmul, t, contiguous");
  auto st = torch::stack({r, r}, 1);
  auto chunks = st.chunk(2, 1);
  TORCH_CHECK(torch::cat({r, r}).numel() == 10 && chunks.size() == 2, "cat, stack, chunk");
  auto [vals, idx] = torch::topk(l, 2);
  TORCH_CHECK(idx[0].item<int64_t>() == 4 && vals[1].item<float>() == 0.75f, "topk");
  TORCH_CHECK(!torch::isnan(l).any().item<bool>(), "isnan().any()");
  auto unit = F::normalize(b, F::NormalizeFuncOptions().p(2).dim(1));
  TORCH_CHECK(near(unit[0].norm().item<float>(), 1.0), "F::normalize");
  auto g = torch::gather(b, 1, torch::tensor({0, 1}).view({2, 1}));
  TORCH_CHECK(g[1][0].item<float>() == 4.5f, "gather");
  TORCH_CHECK(F::one_hot(torch::tensor({0, 2}), 3).sum().item<int64_t>() == 2, "one_hot");
  auto z2 = torch::zeros({2}, b.options());
  TORCH_CHECK(z2.scalar_type() == torch::kFloat, "options()");
  auto u = torch::empty({1000}).uniform_(-1, 1);
  auto n = torch::normal(0.0, 1.0, {1000});
  TORCH_CHECK(u.abs().max().item<float>() <= 1 && std::abs(n.mean().item<float>()) < 0.2f, "uniform_, normal");
  TORCH_CHECK(b.sum(1, /*keepdim=*/true).sizes() == torch::IntArrayRef({2, 1}), "sum keepdim");
  TORCH_CHECK(near(b.mean().item<float>(), 3.0) && near(b.var().item<float>(), 5.0 / 3.0), "mean, var");
  TORCH_CHECK(std::get<0>(torch::randperm(5).sort())[4].item<int64_t>() == 4, "randperm, sort");
  TORCH_CHECK(torch::allclose(b, b.clone()) && torch::equal(a, a), "allclose, equal");
  auto xr = torch::randn({3}, torch::requires_grad());
  auto yr = (xr * xr).sum();
  auto grads = torch::autograd::grad({yr}, {xr}, {}, /*retain_graph=*/true, /*create_graph=*/true);
  TORCH_CHECK(torch::allclose(grads[0], 2 * xr), "autograd::grad");
  xr.register_hook([](torch::Tensor grad) { return grad * 2; });
  yr.backward();
  TORCH_CHECK(torch::allclose(xr.grad(), 4 * xr), "register_hook");
  auto seq = torch::nn::Sequential();
  seq->push_back(torch::nn::Linear(3, 3));
  seq->push_back(torch::nn::Functional(torch::relu));
  seq->push_back(torch::nn::LogSoftmax(1));
  TORCH_CHECK(near(seq->forward(torch::ones({2, 3})).exp().sum().item<float>(), 2.0), "LogSoftmax module");
  auto mse = torch::nn::MSELoss()(b, b * 2);
  auto bce = F::binary_cross_entropy_with_logits(torch::zeros({2}), torch::ones({2}));
  auto ce = torch::nn::CrossEntropyLoss()(torch::zeros({2, 3}), torch::tensor({0, 2}));
  TORCH_CHECK(near(mse.item<float>(), 10.25) && near(bce.item<float>(), std::log(2.0)) &&
                  near(ce.item<float>(), std::log(3.0)),
              "losses");
  auto mha = torch::nn::MultiheadAttention(torch::nn::MultiheadAttentionOptions(8, 2));
  auto qkv = torch::randn({4, 2, 8});
  TORCH_CHECK(std::get<0>(mha->forward(qkv, qkv, qkv)).sizes() == qkv.sizes(), "MultiheadAttention");
  TORCH_CHECK(F::gelu(b).numel() == 4 && F::silu(b).numel() == 4, "gelu, silu");
  TORCH_CHECK(b.clamp(2, 4).clamp_min(0).min().item<float>() == 2, "clamp");
  torch::set_num_threads(2);
  TORCH_CHECK(torch::get_num_threads() == 2 && !b.is_cuda() && b.device().is_cpu(), "threads, device");
  auto d = b.to(torch::kFloat64);
  TORCH_CHECK(d.data_ptr<double>()[3] == 4.5, "data_ptr<double>");
  auto fl = torch::floor(b) + torch::ceil(b) + torch::round(b) + torch::exp(b).log() + torch::pow(b, 2).sqrt();
  TORCH_CHECK(near(fl[0][0].item<float>(), 1 + 2 + 2 + 1.5 + 1.5), "floor, ceil, round, exp, log, pow, sqrt");
  TORCH_CHECK(torch::cumsum(r, 0)[4].item<int64_t>() == 20, "cumsum");
  TORCH_CHECK(torch::outer(l, l).sizes() == torch::IntArrayRef({5, 5}) && near(torch::dot(l, l).item<float>(), 1.875),
              "outer, dot");
  TORCH_CHECK(torch::max(l, 1 - l).min().item<float>() == 0.5f && torch::min(l, 1 - l).max().item<float>() == 0.5f,
              "min/max of two tensors");
  TORCH_CHECK(b.prod(1)[0].item<float>() == 3.75f && b.prod().item<float>() == 3.75f * 15.75f, "prod");
  TORCH_CHECK(torch::roll(r, 1)[0].item<int64_t>() == 8, "roll");
  TORCH_CHECK(near(torch::erf(torch::zeros({1}))[0].item<float>(), 0.0), "erf");
  auto probs = torch::softmax(torch::randn({4, 3}), 1);
  auto actions = torch::multinomial(probs, 1);
  TORCH_CHECK(actions.sizes() == torch::IntArrayRef({4, 1}) && actions.max().item<int64_t>() < 3, "multinomial");
  auto coin = torch::bernoulli(torch::full({100}, 0.5));
  TORCH_CHECK(coin.sum().item<float>() > 20 && coin.sum().item<float>() < 80, "bernoulli");
  auto sm = b.sum(torch::IntArrayRef{0, 1});
  TORCH_CHECK(sm.item<float>() == 12, "sum over dims");
  TORCH_CHECK(torch::logical_not(b > 2).sum().item<int64_t>() == 1, "logical_not");
  TORCH_CHECK(near(F::mse_loss(b, b + 1, F::MSELossFuncOptions().reduction(torch::kSum)).item<float>(), 4.0),
              "mse_loss with kSum");
  TORCH_CHECK(b.sum().item().toFloat() == 12.0f, "item().toFloat()");
  TORCH_CHECK(torch::argmax(probs, 1, /*keepdim=*/true).sizes() == torch::IntArrayRef({4, 1}), "argmax keepdim");
  TORCH_CHECK(torch::logsumexp(probs, 1).numel() == 4, "logsumexp");
  b.print();
}

}  // namespace

int main() {
  training_step();
  tensor_calls();
  std::cout << "everyday calls compiled and ran" << std::endl;
  return 0;
}
