// bench/bench_optim.cpp — one optimizer step over a model's parameter list, glassbox against libtorch, and against
// the machine's memory bandwidth measured in the same run (a STREAM triad):
//   parameter lists: the Transformer encoder of bench_models (2 layers, d 256, ffn 1024: 1.58M floats in 26 tensors),
//   the MLP 784-1024-1024-10 (1.86M in 6) and the tiny MLP 32-64-64-4 (6.6K in 6);
//   optimizers: AdamW (lr 1e-4, the Transformer's in bench_models), Adam with amsgrad and weight decay, SGD with
//   momentum 0.9, RMSprop centered with momentum 0.9, Adagrad. Gradients are fixed; the state exists (a step was taken
//   before timing).
// Bytes counted as the least traffic each update needs per element: AdamW/Adam read p, g, m, v and write p, m, v
// (7 floats; amsgrad 9), SGD with momentum reads p, g, buf and writes p, buf (5), centered RMSprop with momentum
// reads p, g, square_avg, grad_avg, buf and writes all but g (9), Adagrad reads p, g, sum and writes p, sum (5). One
// JSON line per (list, optimizer): value = glassbox us, peer_value = libtorch us, glassbox's GB/s and its fraction of
// the triad's.
#include <glassbox/glassbox.h>
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "bench_common.h"

namespace {

using Shapes = std::vector<std::vector<int64_t>>;

Shapes transformer_shapes() {
  Shapes s;
  for (int layer = 0; layer < 2; ++layer) {
    for (Shapes add : {Shapes{{768, 256}, {768}, {256, 256}, {256}},  // attention in_proj, out_proj
                       Shapes{{1024, 256}, {1024}, {256, 1024}, {256}},  // feed-forward
                       Shapes{{256}, {256}, {256}, {256}}})             // two layer norms
      s.insert(s.end(), add.begin(), add.end());
  }
  s.push_back({10, 256});
  s.push_back({10});
  return s;
}

struct Setting {
  const char* name;
  Shapes shapes;
};

struct Opt {
  const char* name;
  double floats_per_element;
  std::function<std::unique_ptr<gb::optim::Optimizer>(std::vector<gb::Tensor>)> ours;
  std::function<std::unique_ptr<torch::optim::Optimizer>(std::vector<torch::Tensor>)> theirs;
};

}  // namespace

int main() {
  const int threads = gb::get_num_threads();
  torch::set_num_threads(threads);
  gb::set_num_threads(threads);
  const double triad = bench::triad_gbs(threads);
  const Setting settings[] = {
      {"transformer", transformer_shapes()},
      {"mlp", {{1024, 784}, {1024}, {1024, 1024}, {1024}, {10, 1024}, {10}}},
      {"tiny_mlp", {{64, 32}, {64}, {64, 64}, {64}, {4, 64}, {4}}},
  };
  const Opt opts[] = {
      {"adamw", 7,
       [](std::vector<gb::Tensor> p) { return std::make_unique<gb::optim::AdamW>(p, gb::optim::AdamWOptions(1e-4)); },
       [](std::vector<torch::Tensor> p) {
         return std::make_unique<torch::optim::AdamW>(p, torch::optim::AdamWOptions(1e-4));
       }},
      {"adam_amsgrad_wd", 9,
       [](std::vector<gb::Tensor> p) {
         return std::make_unique<gb::optim::Adam>(p, gb::optim::AdamOptions(1e-3).amsgrad(true).weight_decay(1e-2));
       },
       [](std::vector<torch::Tensor> p) {
         return std::make_unique<torch::optim::Adam>(p,
                                                     torch::optim::AdamOptions(1e-3).amsgrad(true).weight_decay(1e-2));
       }},
      {"sgd_momentum", 5,
       [](std::vector<gb::Tensor> p) {
         return std::make_unique<gb::optim::SGD>(p, gb::optim::SGDOptions(1e-2).momentum(0.9));
       },
       [](std::vector<torch::Tensor> p) {
         return std::make_unique<torch::optim::SGD>(p, torch::optim::SGDOptions(1e-2).momentum(0.9));
       }},
      {"rmsprop_centered_momentum", 9,
       [](std::vector<gb::Tensor> p) {
         return std::make_unique<gb::optim::RMSprop>(p, gb::optim::RMSpropOptions(1e-3).centered(true).momentum(0.9));
       },
       [](std::vector<torch::Tensor> p) {
         return std::make_unique<torch::optim::RMSprop>(
             p, torch::optim::RMSpropOptions(1e-3).centered(true).momentum(0.9));
       }},
      {"adagrad", 5,
       [](std::vector<gb::Tensor> p) {
         return std::make_unique<gb::optim::Adagrad>(p, gb::optim::AdagradOptions(1e-2));
       },
       [](std::vector<torch::Tensor> p) {
         return std::make_unique<torch::optim::Adagrad>(p, torch::optim::AdagradOptions(1e-2));
       }},
  };
  for (const Setting& s : settings) {
    gb::manual_seed(0);
    std::vector<gb::Tensor> ours;
    std::vector<torch::Tensor> theirs;
    int64_t n = 0;
    for (const auto& shape : s.shapes) {
      gb::Tensor p = gb::randn(shape).requires_grad_();
      p.set_grad(gb::randn(shape) * 1e-2);
      torch::Tensor tp = torch::from_blob(p.detach().data_ptr<float>(), shape, torch::kFloat).clone().requires_grad_();
      tp.mutable_grad() = torch::from_blob(p.grad().data_ptr<float>(), shape, torch::kFloat).clone();
      ours.push_back(p);
      theirs.push_back(tp);
      n += p.numel();
    }
    for (const Opt& o : opts) {
      auto a = o.ours(ours);
      auto b = o.theirs(theirs);
      a->step();  // the state exists before timing
      b->step();
      const int inner = n < 100000 ? 200 : 5;
      auto [t, peer] = bench::compare([&] { a->step(); }, [&] { b->step(); }, inner, 0.4);
      const double gbs = o.floats_per_element * sizeof(float) * double(n) / t / 1e9;
      bench::emit("optim", std::string(s.name) + "_" + o.name + "_step_us", t * 1e6, "us", peer * 1e6,
                  "\"threads\": " + std::to_string(threads) + ", \"params\": " + std::to_string(n) +
                      ", \"tensors\": " + std::to_string(s.shapes.size()) + ", \"gbs\": " + std::to_string(gbs) +
                      ", \"triad_gbs\": " + std::to_string(triad) +
                      ", \"fraction_of_triad\": " + std::to_string(gbs / triad));
    }
  }
  return 0;
}
