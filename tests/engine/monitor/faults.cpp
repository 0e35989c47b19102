// tests/engine/monitor/faults.cpp — training programs with one planted fault each, written as a user writes a
// loop: modules called as net(x), an optimizer, and no glassbox call at all. The monitor tests run them in a fresh
// process with GLASSBOX_TRACE=file.db (and nothing else), then read the anomalies the trace holds.
//
//   glassbox_faults <scenario>      scenarios: see kScenarios at the bottom
//
// GLASSBOX_FAULTS_DEVICE=cuda runs the same programs with the model and the data on cuda:0 (the monitor's device
// checks: tests/engine/monitor/deferred_gpu_test.cpp).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <glassbox/glassbox.h>

namespace nn = gb::nn;
namespace F = gb::nn::functional;

namespace {

const gb::Device kDevice = [] {
  const char* d = std::getenv("GLASSBOX_FAULTS_DEVICE");
  return d && *d ? gb::Device(d) : gb::Device(gb::kCPU);
}();

// Three noisy clusters in 8 dimensions: an easy, healthy classification task.
struct Data {
  gb::Tensor x, y;
};
Data batch(int64_t n, uint64_t seed) {
  gb::manual_seed(seed);
  gb::Tensor y = gb::randint(0, 3, {n});
  gb::Tensor centers = gb::tensor(std::vector<float>{2, 0, 0, 1, 0, 0, 0, 0,  //
                                                     0, 2, 0, 0, 1, 0, 0, 0,  //
                                                     0, 0, 2, 0, 0, 1, 0, 0})
                           .view({3, 8});
  gb::Tensor x = centers.index_select(0, y) + 0.5 * gb::randn({n, 8});
  return {x.to(kDevice), y.to(kDevice)};
}

struct MlpImpl : nn::Module {
  MlpImpl(int64_t hidden = 32) {
    fc1 = register_module("fc1", nn::Linear(8, hidden));
    act1 = register_module("act1", nn::ReLU());
    fc2 = register_module("fc2", nn::Linear(hidden, hidden));
    act2 = register_module("act2", nn::ReLU());
    fc3 = register_module("fc3", nn::Linear(hidden, 3));
  }
  gb::Tensor forward(gb::Tensor x) { return fc3(act2(fc2(act1(fc1(x))))); }
  nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr};
  nn::ReLU act1{nullptr}, act2{nullptr};
};
GB_MODULE(Mlp);

// The healthy loop every scenario starts from (data: the batch of each step; default 64 samples per step).
template <class Net>
void train(Net& net, gb::optim::Optimizer& opt, int steps, const std::function<Data(int)>& data = {}) {
  for (int step = 0; step < steps; ++step) {
    Data d = data ? data(step) : batch(64, 100 + step);
    opt.zero_grad();
    gb::Tensor loss = F::cross_entropy(net(d.x), d.y);
    loss.backward();
    opt.step();
  }
}

int healthy() {
  gb::manual_seed(0);
  Mlp net;
  net->to(kDevice);
  gb::optim::SGD opt(net->parameters(), gb::optim::SGDOptions(0.05).momentum(0.9));
  train(net, opt, 60);
  return 0;
}

int healthy_adam() {
  gb::manual_seed(0);
  Mlp net;
  net->to(kDevice);
  gb::optim::AdamW opt(net->parameters(), gb::optim::AdamWOptions(3e-3).weight_decay(0.01));
  train(net, opt, 60);
  return 0;
}

// 1. log of zeros in a named submodule: a "log probability" head applied to ReLU outputs, which are exactly 0.
struct LogHeadImpl : nn::Module {
  gb::Tensor forward(gb::Tensor x) { return gb::log(x); }
};
GB_MODULE(LogHead);
struct LogNetImpl : nn::Module {
  LogNetImpl() {
    body = register_module("body", nn::Linear(8, 16));
    head = register_module("head", LogHead());
    out = register_module("out", nn::Linear(16, 3));
  }
  gb::Tensor forward(gb::Tensor x) { return out(head(gb::relu(body(x)))); }
  nn::Linear body{nullptr}, out{nullptr};
  LogHead head{nullptr};
};
GB_MODULE(LogNet);

int log_zero() {
  gb::manual_seed(0);
  LogNet net;
  net->to(kDevice);
  gb::optim::SGD opt(net->parameters(), gb::optim::SGDOptions(0.05));
  train(net, opt, 3, [](int step) { return batch(32, step); });
  return 0;
}

// 2. The norm of an all-zero row: sqrt(0) is finite forward, but its derivative is infinite.
struct RowNormImpl : nn::Module {
  gb::Tensor forward(gb::Tensor x) { return (x * x).sum(1).sqrt(); }
};
GB_MODULE(RowNorm);
struct NormNetImpl : nn::Module {
  NormNetImpl() {
    proj = register_module("proj", nn::Linear(nn::LinearOptions(8, 4).bias(false)));
    norm = register_module("norm", RowNorm());
  }
  gb::Tensor forward(gb::Tensor x) { return norm(proj(x)); }
  nn::Linear proj{nullptr};
  RowNorm norm{nullptr};
};
GB_MODULE(NormNet);

int sqrt_zero_row() {
  gb::manual_seed(0);
  NormNet net;
  net->to(kDevice);
  gb::optim::SGD opt(net->parameters(), gb::optim::SGDOptions(0.01));
  for (int step = 0; step < 3; ++step) {
    Data d = batch(16, step);
    d.x.select(0, 3).zero_();  // one all-zero row (a padding sample)
    opt.zero_grad();
    gb::Tensor loss = net(d.x).mean();
    loss.backward();
    opt.step();
  }
  return 0;
}

// 3. A custom autograd Function whose backward divides by zero.
struct BadScale : gb::autograd::Function<BadScale> {
  static gb::Tensor forward(gb::autograd::AutogradContext* ctx, gb::Tensor x) {
    ctx->save_for_backward({x});
    return x * 2;
  }
  static gb::variable_list backward(gb::autograd::AutogradContext* ctx, gb::variable_list grads) {
    gb::Tensor x = ctx->get_saved_variables()[0];
    return {grads[0] * 2 / (x - x)};  // a bug: the denominator is zero
  }
};
struct ScaleLayerImpl : nn::Module {
  gb::Tensor forward(gb::Tensor x) { return BadScale::apply(x); }
};
GB_MODULE(ScaleLayer);
struct CustomNetImpl : nn::Module {
  CustomNetImpl() {
    fc = register_module("fc", nn::Linear(8, 3));
    scale = register_module("scale", ScaleLayer());
  }
  gb::Tensor forward(gb::Tensor x) { return scale(fc(x)); }
  nn::Linear fc{nullptr};
  ScaleLayer scale{nullptr};
};
GB_MODULE(CustomNet);

int custom_div0() {
  gb::manual_seed(0);
  CustomNet net;
  net->to(kDevice);
  gb::optim::SGD opt(net->parameters(), gb::optim::SGDOptions(0.05));
  train(net, opt, 3, [](int step) { return batch(32, step); });
  return 0;
}

// 3b. The same Function applied to a parameter itself: its broken gradient goes straight to the parameter's .grad.
struct ScaledLinearImpl : nn::Module {
  ScaledLinearImpl() { weight = register_parameter("weight", gb::randn({8, 3}) * 0.1); }
  gb::Tensor forward(gb::Tensor x) { return x.mm(BadScale::apply(weight)); }
  gb::Tensor weight;
};
GB_MODULE(ScaledLinear);
struct LeafNetImpl : nn::Module {
  LeafNetImpl() { layer = register_module("layer", ScaledLinear()); }
  gb::Tensor forward(gb::Tensor x) { return layer(x); }
  ScaledLinear layer{nullptr};
};
GB_MODULE(LeafNet);

int leaf_div0() {
  gb::manual_seed(0);
  LeafNet net;
  net->to(kDevice);
  gb::optim::SGD opt(net->parameters(), gb::optim::SGDOptions(0.05));
  train(net, opt, 3, [](int step) { return batch(32, step); });
  return 0;
}

// 4. One layer in its own parameter group with a far too large learning rate.
int big_lr() {
  gb::manual_seed(0);
  Mlp net;
  net->to(kDevice);
  std::vector<gb::optim::OptimizerParamGroup> groups;
  std::vector<gb::Tensor> rest;
  for (auto& p : net->fc1->parameters()) rest.push_back(p);
  for (auto& p : net->fc2->parameters()) rest.push_back(p);
  groups.emplace_back(rest);
  groups.emplace_back(net->fc3->parameters(), std::make_unique<gb::optim::SGDOptions>(40.0));
  gb::optim::SGD opt(groups, gb::optim::SGDOptions(0.05));
  train(net, opt, 12);
  return 0;
}

// 5. No zero_grad: gradients pile up across steps.
int no_zero_grad() {
  gb::manual_seed(0);
  Mlp net;
  net->to(kDevice);
  gb::optim::SGD opt(net->parameters(), gb::optim::SGDOptions(0.01));
  for (int step = 0; step < 5; ++step) {
    Data d = batch(64, step);
    gb::Tensor loss = F::cross_entropy(net(d.x), d.y);
    loss.backward();
    opt.step();
  }
  return 0;
}

// Gradient accumulation done right: two backwards, one step, then zero_grad (p.grad().zero_() as in libtorch).
int accumulate_ok() {
  gb::manual_seed(0);
  Mlp net;
  net->to(kDevice);
  gb::optim::SGD opt(net->parameters(), gb::optim::SGDOptions(0.02).momentum(0.9));
  for (int step = 0; step < 20; ++step) {
    for (int micro = 0; micro < 2; ++micro) {
      Data d = batch(32, 2 * step + micro);
      (F::cross_entropy(net(d.x), d.y) / 2).backward();
    }
    opt.step();
    for (auto& p : net->parameters()) {
      gb::Tensor g = p.grad();
      g.zero_();
    }
  }
  return 0;
}

// 6. The loss kept with its graph across steps: every step's activations stay alive.
int kept_graph() {
  gb::manual_seed(0);
  Mlp net(256);
  net->to(kDevice);
  gb::optim::SGD opt(net->parameters(), gb::optim::SGDOptions(0.01));
  gb::Tensor total = gb::zeros({}, gb::TensorOptions().device(kDevice));
  for (int step = 0; step < 14; ++step) {
    Data d = batch(256, step);
    opt.zero_grad();
    gb::Tensor loss = F::cross_entropy(net(d.x), d.y);
    loss.backward(/*gradient=*/{}, /*retain_graph=*/true);
    opt.step();
    total = total + loss;  // meant for a running average; keeps each step's graph
  }
  std::printf("mean loss %.3f\n", total.item<double>() / 14);
  return 0;
}

// 7. Dead ReLUs: a bias initialised far negative kills every unit of act1.
int dead_relu() {
  gb::manual_seed(0);
  Mlp net;
  net->to(kDevice);
  {
    gb::NoGradGuard no_grad;
    net->fc1->bias.fill_(-100.0);
  }
  gb::optim::SGD opt(net->parameters(), gb::optim::SGDOptions(0.05).momentum(0.9));
  train(net, opt, 10);
  return 0;
}

// 8. One corrupt batch: at step 40 the labels arrive shifted by one class (a mislabelled shard).
int loss_spike() {
  gb::manual_seed(0);
  Mlp net;
  net->to(kDevice);
  gb::optim::SGD opt(net->parameters(), gb::optim::SGDOptions(0.05).momentum(0.9));
  train(net, opt, 50, [](int step) {
    Data d = batch(64, 100 + step);
    if (step == 40) d.y = gb::tensor(std::vector<int64_t>{1, 2, 0}).to(kDevice).index_select(0, d.y);
    return d;
  });
  return 0;
}

// ---- issue 41 [Diagnosis]: faults written as user code that the detectors were not built around ----

// 9. One layer trained with a learning rate 6,000 times the rest, in its own parameter group: its first update
// dwarfs the weight, the ReLU after it dies, and the layer before that ReLU stops getting gradient.
int lr_group() {
  gb::manual_seed(0);
  Mlp net;
  net->to(kDevice);
  std::vector<gb::optim::OptimizerParamGroup> groups;
  std::vector<gb::Tensor> rest;
  for (auto& p : net->fc1->parameters()) rest.push_back(p);
  for (auto& p : net->fc3->parameters()) rest.push_back(p);
  groups.emplace_back(rest);
  groups.emplace_back(net->fc2->parameters(), std::make_unique<gb::optim::SGDOptions>(
                                                  gb::optim::SGDOptions(0.05 * 6000).momentum(0.9)));
  gb::optim::SGD opt(groups, gb::optim::SGDOptions(0.05).momentum(0.9));
  train(net, opt, 120);
  return 0;
}

// 10. Sixteen Linear + Sigmoid layers: the gradient shrinks by orders of magnitude on its way back to the first.
struct DeepImpl : nn::Module {
  DeepImpl(int depth, bool sigmoid, bool residual) : residual_(residual) {
    in = register_module("in", nn::Linear(8, 32));
    for (int i = 0; i < depth; ++i) {
      layers->push_back(nn::Linear(32, 32));
      if (residual)
        norms->push_back(nn::LayerNorm(nn::LayerNormOptions({32})));
    }
    register_module("layers", layers);
    if (residual) register_module("norms", norms);
    out = register_module("out", nn::Linear(32, 3));
    sigmoid_ = sigmoid;
  }
  gb::Tensor forward(gb::Tensor x) {
    x = in(x);
    for (size_t i = 0; i < layers->size(); ++i) {
      gb::Tensor h = layers->at<nn::LinearImpl>(i).forward(residual_ ? norms->at<nn::LayerNormImpl>(i).forward(x) : x);
      h = sigmoid_ ? gb::sigmoid(h) : gb::relu(h);
      x = residual_ ? x + h : h;
    }
    return out(x);
  }
  nn::Linear in{nullptr}, out{nullptr};
  nn::ModuleList layers, norms;
  bool sigmoid_ = true, residual_ = false;
};
GB_MODULE(Deep);

int deep_sigmoid() {
  gb::manual_seed(0);
  Deep net(16, /*sigmoid=*/true, /*residual=*/false);
  net->to(kDevice);
  gb::optim::SGD opt(net->parameters(), gb::optim::SGDOptions(0.05).momentum(0.9));
  train(net, opt, 40);
  return 0;
}

// The healthy counterpart: as deep, with residual connections, LayerNorm and ReLU.
int deep_residual() {
  gb::manual_seed(0);
  Deep net(16, /*sigmoid=*/false, /*residual=*/true);
  net->to(kDevice);
  gb::optim::AdamW opt(net->parameters(), gb::optim::AdamWOptions(1e-3));
  train(net, opt, 60);
  return 0;
}

// 11. An encoder whose output is detached by mistake: its parameters are in the optimizer and never get a gradient.
struct EncNetImpl : nn::Module {
  EncNetImpl() {
    encoder = register_module("encoder", nn::Sequential(nn::Linear(8, 32), nn::ReLU(), nn::Linear(32, 32)));
    head = register_module("head", nn::Linear(32, 3));
  }
  gb::Tensor forward(gb::Tensor x) { return head(gb::relu(encoder->forward(x)).detach()); }
  nn::Sequential encoder{nullptr};
  nn::Linear head{nullptr};
};
GB_MODULE(EncNet);

int detached_encoder() {
  gb::manual_seed(0);
  EncNet net;
  net->to(kDevice);
  gb::optim::Adam opt(net->parameters(), gb::optim::AdamOptions(1e-3));
  train(net, opt, 30);
  return 0;
}

// 12. A layer frozen by mistake (requires_grad turned off after the optimizer was made) and a module the forward
// skips (a branch left behind by a refactoring).
struct SkipNetImpl : nn::Module {
  SkipNetImpl() {
    fc1 = register_module("fc1", nn::Linear(8, 32));
    unused = register_module("unused", nn::Linear(32, 32));
    fc2 = register_module("fc2", nn::Linear(32, 3));
  }
  gb::Tensor forward(gb::Tensor x) { return fc2(gb::relu(fc1(x))); }
  nn::Linear fc1{nullptr}, unused{nullptr}, fc2{nullptr};
};
GB_MODULE(SkipNet);

int frozen_and_skipped() {
  gb::manual_seed(0);
  SkipNet net;
  net->to(kDevice);
  gb::optim::SGD opt(net->parameters(), gb::optim::SGDOptions(0.05).momentum(0.9));
  for (auto& p : net->fc1->parameters()) p.requires_grad_(false);
  train(net, opt, 15);
  return 0;
}

// 13. A branch multiplied by a mask that is zero everywhere (a gating bug): its parameters get exactly zero gradient.
struct GatedImpl : nn::Module {
  GatedImpl() {
    main = register_module("main", nn::Linear(8, 3));
    branch = register_module("branch", nn::Linear(8, 3));
  }
  gb::Tensor forward(gb::Tensor x) {
    gb::Tensor gate = gb::zeros({1, 3}, x.options());  // meant to be learned or ones
    return main(x) + branch(x) * gate;
  }
  nn::Linear main{nullptr}, branch{nullptr};
};
GB_MODULE(Gated);

int zero_gate() {
  gb::manual_seed(0);
  Gated net;
  net->to(kDevice);
  gb::optim::SGD opt(net->parameters(), gb::optim::SGDOptions(0.05));
  train(net, opt, 15);
  return 0;
}

// 14. A small CNN whose schedule has a bug: the lr jumps 1000x at step 30 (a misplaced factor): the next update
// dwarfs the weights, then the run goes non-finite.
struct ConvNetImpl : nn::Module {
  ConvNetImpl() {
    conv1 = register_module("conv1", nn::Conv2d(nn::Conv2dOptions(1, 8, 3).padding(1)));
    conv2 = register_module("conv2", nn::Conv2d(nn::Conv2dOptions(8, 8, 3).padding(1)));
    fc = register_module("fc", nn::Linear(8 * 4 * 4, 3));
  }
  gb::Tensor forward(gb::Tensor x) {
    x = F::max_pool2d(gb::relu(conv1(x)), F::MaxPool2dFuncOptions(2));
    x = gb::relu(conv2(x));
    return fc(x.flatten(1));
  }
  nn::Conv2d conv1{nullptr}, conv2{nullptr};
  nn::Linear fc{nullptr};
};
GB_MODULE(ConvNet);

Data images(int64_t n, uint64_t seed) {
  Data d = batch(n, seed);  // the clusters' labels; each image a pattern per class plus noise
  gb::manual_seed(seed + 7);
  gb::Tensor patterns = gb::randn({3, 1, 8, 8}, gb::TensorOptions().device(kDevice));
  d.x = patterns.index_select(0, d.y) + 0.3 * gb::randn({n, 1, 8, 8}, gb::TensorOptions().device(kDevice));
  return d;
}

int cnn_lr_jump() {
  gb::manual_seed(0);
  ConvNet net;
  net->to(kDevice);
  gb::optim::SGD opt(net->parameters(), gb::optim::SGDOptions(0.02).momentum(0.9));
  train(net, opt, 40, [&opt](int step) {
    if (step == 30)
      for (auto& g : opt.param_groups()) static_cast<gb::optim::SGDOptions&>(g.options()).lr(20.0);
    return images(32, 100 + step);
  });
  return 0;
}

// The healthy counterpart: the same CNN, the same data, a constant lr.
int cnn_healthy() {
  gb::manual_seed(0);
  ConvNet net;
  net->to(kDevice);
  gb::optim::SGD opt(net->parameters(), gb::optim::SGDOptions(0.02).momentum(0.9));
  train(net, opt, 300, [](int step) { return images(32, 100 + step); });
  return 0;
}

// A healthy MLP trained far past convergence (tens of thousands of steps): gradients shrink by orders of magnitude
// and then scatter; the loss's noise at its floor is 10x its median now and then.
int healthy_long() {
  gb::manual_seed(0);
  Mlp net;
  net->to(kDevice);
  gb::optim::SGD opt(net->parameters(), gb::optim::SGDOptions(0.05).momentum(0.9));
  const char* steps = std::getenv("GLASSBOX_FAULTS_STEPS");
  train(net, opt, steps && *steps ? std::atoi(steps) : 20000, [](int step) { return batch(32, 1000 + step); });
  return 0;
}

// 15. Every step's validation predictions kept for a report at the end, computed without gb::NoGradGuard: each
// keeps its graph (the activations saved for a backward that never comes) until the device runs out (the test
// limits it: GLASSBOX_ALLOC_CONF=capacity:...). The OOM is caught and told, as a training script's would be.
int kept_outputs_oom() {
  gb::manual_seed(0);
  Mlp net(256);
  net->to(kDevice);
  gb::optim::SGD opt(net->parameters(), gb::optim::SGDOptions(0.05).momentum(0.9));
  std::vector<gb::Tensor> predictions;
  try {
    for (int step = 0; step < 400; ++step) {
      Data d = batch(64, 100 + step);
      opt.zero_grad();
      gb::Tensor loss = F::cross_entropy(net(d.x), d.y);
      loss.backward();
      opt.step();
      Data val = batch(512, 7);
      predictions.push_back(net(val.x));  // meant for a report at the end; keeps each step's graph
    }
  } catch (const gb::OutOfMemoryError& e) {
    std::printf("out of memory after %zu steps:\n%s\n", predictions.size(), e.what());
    return 0;
  }
  std::printf("kept %zu predictions\n", predictions.size());
  return 0;
}

// 15b. Healthy but too big: ten steps of 64 samples, then one batch far larger than the device (the test limits it):
// the step's own activations run out, nothing earlier is kept.
int peak_oom() {
  gb::manual_seed(0);
  Mlp net(256);
  net->to(kDevice);
  gb::optim::SGD opt(net->parameters(), gb::optim::SGDOptions(0.05).momentum(0.9));
  try {
    train(net, opt, 12, [](int step) { return batch(step < 10 ? 64 : 16384, 100 + step); });
  } catch (const gb::OutOfMemoryError& e) {
    std::printf("out of memory:\n%s\n", e.what());
    return 0;
  }
  std::printf("every step fit\n");
  return 0;
}

struct Scenario {
  const char* name;
  int (*run)();
};
const Scenario kScenarios[] = {
    {"healthy", healthy},           {"healthy_adam", healthy_adam},
    {"log_zero", log_zero},         {"sqrt_zero_row", sqrt_zero_row},
    {"custom_div0", custom_div0},   {"leaf_div0", leaf_div0},
    {"big_lr", big_lr},
    {"no_zero_grad", no_zero_grad}, {"accumulate_ok", accumulate_ok},
    {"kept_graph", kept_graph},     {"dead_relu", dead_relu},
    {"loss_spike", loss_spike},
    {"lr_group", lr_group},         {"deep_sigmoid", deep_sigmoid},
    {"deep_residual", deep_residual}, {"detached_encoder", detached_encoder},
    {"frozen_and_skipped", frozen_and_skipped}, {"zero_gate", zero_gate},
    {"cnn_lr_jump", cnn_lr_jump},   {"cnn_healthy", cnn_healthy},
    {"healthy_long", healthy_long},
    {"kept_outputs_oom", kept_outputs_oom}, {"peak_oom", peak_oom},
};

}  // namespace

int main(int argc, char** argv) {
  gb::set_num_threads(1);
  if (argc == 2)
    for (const Scenario& s : kScenarios)
      if (std::strcmp(argv[1], s.name) == 0) return s.run();
  std::fprintf(stderr, "usage: glassbox_faults <scenario>; scenarios:");
  for (const Scenario& s : kScenarios) std::fprintf(stderr, " %s", s.name);
  std::fprintf(stderr, "\n");
  return 2;
}
