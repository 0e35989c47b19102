// samples/lessons/train_eval_modes.cpp — model.train() and model.eval() change what BatchNorm and Dropout compute.
//
// The claim (PyTorch's "Saving and loading models" tutorial: "Remember that you must call model.eval() to set
// dropout and batch normalization layers to evaluation mode before running inference"): in train mode Dropout zeroes a
// random share p of the values and scales the rest by 1/(1-p), and BatchNorm normalizes with the batch's own
// statistics; in eval mode Dropout is the identity and BatchNorm uses its running statistics. So the same input gives
// different outputs in the two modes, two train-mode calls differ from each other, and two eval-mode calls are
// identical.
//
// The lesson trains Linear(8,32) - BatchNorm1d - ReLU - Dropout(0.5) - Linear(32,3) on Blobs for 4 epochs (so the
// running statistics are learned), then feeds one batch twice in each mode (under NoGradGuard) and prints the max
// |difference| between the calls, between the modes, and what Dropout and BatchNorm do alone in each mode.
//
//   ./build/samples/lessons/lesson_train_eval_modes
#include <glassbox/data/data.h>
#include <glassbox/glassbox.h>

#include <cstdio>
#include <memory>

#include "lesson.h"

namespace F = gb::nn::functional;

namespace {

double max_abs_diff(const gb::Tensor& a, const gb::Tensor& b) { return (a - b).abs().max().item<double>(); }

}  // namespace

int main() {
  lesson::Lesson lesson("train_eval_modes",
                        "train() and eval() change BatchNorm and Dropout: the same input gives different outputs in "
                        "the two modes; eval is deterministic across calls, train is not");
  gb::manual_seed(0);
  auto blobs = std::make_shared<gb::data::datasets::Blobs>(512, 3, 8, 2.0, /*seed=*/0);
  gb::data::DataLoader loader(
      blobs, gb::data::DataLoaderOptions().batch_size(64).shuffle(true).generator(std::make_shared<gb::Generator>(0)));
  gb::nn::Linear fc1(8, 32), fc2(32, 3);
  gb::nn::BatchNorm1d bn(32);
  gb::nn::Dropout drop(0.5);
  gb::nn::Sequential model(fc1, bn, gb::nn::ReLU(), drop, fc2);
  gb::optim::SGD opt(model->parameters(), gb::optim::SGDOptions(0.05).momentum(0.9));
  model->train();
  for (int epoch = 0; epoch < 4; ++epoch) {
    for (auto& batch : loader) {
      auto loss = F::cross_entropy(model(batch.data), batch.target);
      opt.zero_grad();
      loss.backward();
      opt.step();
    }
  }

  gb::NoGradGuard no_grad;
  gb::Tensor x = (*loader.begin()).data;  // one batch, x (64,8)

  model->eval();
  gb::Tensor e1 = model(x), e2 = model(x);
  model->train();  // (train-mode calls also move BatchNorm's running statistics; eval ran first)
  gb::Tensor t1 = model(x), t2 = model(x);
  double eval_diff = max_abs_diff(e1, e2), train_diff = max_abs_diff(t1, t2), mode_diff = max_abs_diff(t1, e1);
  lesson.measured("max |eval call 1 - eval call 2|", eval_diff);
  lesson.measured("max |train call 1 - train call 2|", train_diff);
  lesson.measured("max |train - eval| (same input)", mode_diff);
  lesson.measured("max |eval output| (for scale)", e1.abs().max().item<double>());

  // Each layer alone, on the hidden activations h (64,32).
  gb::Tensor h = fc1(x);
  drop->train();
  gb::Tensor d = drop(h);
  double zeroed = d.eq(0).to(gb::kFloat).mean().item<double>();
  double kept_scale = (d.abs().sum() / h.abs().masked_fill(d.eq(0), 0).sum()).item<double>();
  drop->eval();
  double drop_eval_diff = max_abs_diff(drop(h), h);
  lesson.measured("Dropout(0.5) train: share of values zeroed", lesson::percent(zeroed));
  lesson.measured("Dropout(0.5) train: scale of the kept values", kept_scale);
  lesson.measured("Dropout eval: max |out - in|", drop_eval_diff);
  bn->train();
  gb::Tensor bt = bn(h);
  bn->eval();
  gb::Tensor be = bn(h);
  // With the batch's own statistics each feature's output mean over the batch is exactly its bias (beta).
  double bn_train_offset = max_abs_diff(bt.mean(0), bn->bias), bn_eval_offset = max_abs_diff(be.mean(0), bn->bias);
  double bn_diff = max_abs_diff(bt, be);
  lesson.measured("BatchNorm1d train: max |batch mean of output - beta| (batch statistics)", bn_train_offset);
  lesson.measured("BatchNorm1d eval: max |batch mean of output - beta| (running statistics)", bn_eval_offset);
  lesson.measured("BatchNorm1d: max |train - eval|", bn_diff);

  bool holds = eval_diff == 0 && train_diff > 0 && mode_diff > 0 && zeroed > 0.4 && zeroed < 0.6 && kept_scale > 1.99 &&
               kept_scale < 2.01 && drop_eval_diff == 0 && bn_train_offset < 1e-4 &&
               bn_eval_offset > 10 * bn_train_offset && bn_diff > 0;
  char evidence[320];
  std::snprintf(evidence, sizeof evidence,
                "two eval calls differ by %g, two train calls by %.3g, train and eval by %.3g; Dropout zeroed %s "
                "and scaled the rest by %.3g in train mode only; BatchNorm moved by %.3g",
                eval_diff, train_diff, mode_diff, lesson::percent(zeroed).c_str(), kept_scale, bn_diff);
  return lesson.verdict(holds, evidence);
}
