// samples/lessons/softmax_mse_vs_ce.cpp — which loss a classifier should train on: cross entropy on the logits,
// MSE between softmax and one-hot targets, or cross entropy on probabilities (a softmax applied twice).
//
// The claim (PyTorch's nn.CrossEntropyLoss docs: the input is expected to contain the unnormalized logits for each
// class; the classification tutorials): cross entropy on logits learns fastest. MSE on softmax outputs has a
// gradient that vanishes when the softmax saturates on the wrong class (p (1 - p) factors), and a softmax before
// cross_entropy (which applies log_softmax itself) squeezes the logits cross_entropy sees into [0, 1], so the loss
// can never go below log(C - 1 + e) - 1 and its gradients stay small.
//
// The lesson trains the same MLP 2-32-32-3 from the same initial weights on the same Spirals batches (SGD lr 0.5,
// batch 64) three ways for 400 steps and prints, at steps 50, 100, 200 and 400, the loss each trains on (its
// mean since the previous checkpoint), the held-out accuracy and the cross entropy of the logits on the held-out
// set (the same yardstick for all three).
//
//   ./build/samples/lessons/lesson_softmax_mse_vs_ce
#include <glassbox/data/data.h>
#include <glassbox/glassbox.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "lesson.h"

namespace F = gb::nn::functional;

namespace {

constexpr int64_t kClasses = 3, kSteps = 400;
const std::vector<int64_t> kCheckpoints = {50, 100, 200, 400};

enum class Loss { ce_logits, mse_softmax, ce_softmax };
const char* const kLossNames[] = {"cross_entropy(logits)", "mse(softmax(logits), one_hot)",
                                  "cross_entropy(softmax(logits))"};

struct Checkpoint {
  double accuracy, test_ce;  // held out
  double own_loss;           // the loss it trains on, mean over the steps since the previous checkpoint
};

std::vector<Checkpoint> train(Loss kind, const gb::data::Example<>& test) {
  gb::manual_seed(0);  // the same initial weights for every loss
  gb::nn::Sequential model(gb::nn::Linear(2, 32), gb::nn::ReLU(), gb::nn::Linear(32, 32), gb::nn::ReLU(),
                           gb::nn::Linear(32, kClasses));
  gb::optim::SGD opt(model->parameters(), gb::optim::SGDOptions(0.5));
  // the same batches for every loss
  gb::data::DataLoader loader(
      std::make_shared<gb::data::datasets::Spirals>(1024, kClasses, 0.2, /*seed=*/0),
      gb::data::DataLoaderOptions().batch_size(64).shuffle(true).generator(std::make_shared<gb::Generator>(0)));
  std::vector<Checkpoint> out;
  int64_t step = 0, since = 0;
  double loss_sum = 0;
  while (step < kSteps) {
    for (auto& batch : loader) {
      gb::Tensor logits = model(batch.data);  // (N,3)
      gb::Tensor loss;
      if (kind == Loss::ce_logits)
        loss = F::cross_entropy(logits, batch.target);
      else if (kind == Loss::mse_softmax)
        loss = F::mse_loss(gb::softmax(logits, 1), F::one_hot(batch.target, kClasses).to(gb::kFloat));
      else
        loss = F::cross_entropy(gb::softmax(logits, 1), batch.target);
      opt.zero_grad();
      loss.backward();
      opt.step();
      loss_sum += loss.item<double>();
      ++since;
      if (++step == kCheckpoints[out.size()]) {
        gb::NoGradGuard no_grad;
        gb::Tensor test_logits = model(test.data);
        out.push_back({test_logits.argmax(1).eq(test.target).to(gb::kFloat).mean().item<double>(),
                       F::cross_entropy(test_logits, test.target).item<double>(), loss_sum / double(since)});
        loss_sum = 0;
        since = 0;
      }
      if (step == kSteps) break;
    }
  }
  return out;
}

}  // namespace

int main() {
  lesson::Lesson lesson("softmax_mse_vs_ce",
                        "a classifier trained with cross entropy on its logits learns fastest; MSE on softmax "
                        "outputs and cross entropy after a (second) softmax learn slower");
  gb::data::DataLoader test_loader(std::make_shared<gb::data::datasets::Spirals>(600, kClasses, 0.2, /*seed=*/1),
                                   gb::data::DataLoaderOptions().batch_size(600));
  gb::data::Example<> test = *test_loader.begin();  // the held-out set in one batch: x (600,2), y (600)

  std::vector<std::vector<Checkpoint>> runs;
  for (Loss kind : {Loss::ce_logits, Loss::mse_softmax, Loss::ce_softmax}) {
    runs.push_back(train(kind, test));
    std::string line;
    char buf[128];
    for (size_t c = 0; c < kCheckpoints.size(); ++c) {
      const Checkpoint& k = runs.back()[c];
      std::snprintf(buf, sizeof buf, "%sstep %lld: loss %.3f, held-out acc %s CE %.3f", c ? "; " : "",
                    (long long)kCheckpoints[c], k.own_loss, lesson::percent(k.accuracy).c_str(), k.test_ce);
      line += buf;
    }
    lesson.measured(kLossNames[static_cast<int>(kind)], line);
  }

  // Fastest: cross entropy on logits has the best held-out accuracy averaged over the checkpoints (the area under
  // its learning curve) and at the last one.
  std::vector<double> mean_acc(runs.size(), 0);
  for (size_t r = 0; r < runs.size(); ++r)
    for (const Checkpoint& k : runs[r]) mean_acc[r] += k.accuracy / double(kCheckpoints.size());
  lesson.measured(
      "held-out accuracy averaged over the checkpoints (CE logits, MSE softmax, CE softmax)",
      lesson::percent(mean_acc[0]) + ", " + lesson::percent(mean_acc[1]) + ", " + lesson::percent(mean_acc[2]));
  const size_t last = kCheckpoints.size() - 1;
  bool holds = true;
  for (size_t r = 1; r < runs.size(); ++r)
    holds = holds && mean_acc[0] > mean_acc[r] && runs[0][last].accuracy > runs[r][last].accuracy;
  char evidence[240];
  std::snprintf(evidence, sizeof evidence,
                "held-out accuracy after %lld steps: %s with cross entropy on logits, %s with MSE on softmax, %s "
                "with cross entropy after softmax",
                (long long)kSteps, lesson::percent(runs[0][last].accuracy).c_str(),
                lesson::percent(runs[1][last].accuracy).c_str(), lesson::percent(runs[2][last].accuracy).c_str());
  return lesson.verdict(holds, evidence);
}
