// samples/lessons/grad_scaler.cpp — what GradScaler does with a loss scale that is too large.
//
// The claim (PyTorch's "Automatic Mixed Precision" recipe and the torch.amp.GradScaler docs): the scale only has
// to start large; if it is too large the float16 gradients overflow to inf, GradScaler skips that
// optimizer.step() and multiplies the scale by backoff_factor (0.5), and after a few skipped steps the scale has
// fallen to a value that fits, the steps run and training goes on as with a sensible scale.
//
// The lesson trains the same MLP 8-64-64-4 (float32 weights, float16 autocast on the CPU, SGD) on Blobs for 60
// steps twice: with GradScaler's default init_scale 2^16 and with 2^24 (inputs scaled to about [-1, 1]). It prints
// the steps each run skipped, the scale trajectory (the scale from each step on where it changed), and the loss at
// the start and over the last 10 steps.
//
//   ./build/samples/lessons/lesson_grad_scaler
#include <glassbox/data/data.h>
#include <glassbox/glassbox.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "lesson.h"

namespace F = gb::nn::functional;

namespace {

constexpr int kSteps = 60;

struct Run {
  std::vector<int> skipped;  // steps whose optimizer.step() GradScaler skipped
  std::string trajectory;    // "step 0: 2^24, step 1: 2^23, ...": the scale from each step on where it changed
  double final_scale = 0, first_loss = 0;
  double final_loss = 0;  // mean of the last 10 steps
};

std::string power_of_two(double scale) {
  char buf[32];
  if (std::exp2(std::round(std::log2(scale))) == scale)
    std::snprintf(buf, sizeof buf, "2^%.0f", std::log2(scale));
  else
    std::snprintf(buf, sizeof buf, "%.4g", scale);
  return buf;
}

Run train(double init_scale) {
  gb::manual_seed(0);
  auto blobs = std::make_shared<gb::data::datasets::Blobs>(1024, 4, 8, 4.0, /*seed=*/0);
  gb::data::DataLoader loader(
      blobs, gb::data::DataLoaderOptions().batch_size(64).shuffle(true).generator(std::make_shared<gb::Generator>(0)));
  gb::nn::Sequential model(gb::nn::Linear(8, 64), gb::nn::ReLU(), gb::nn::Linear(64, 64), gb::nn::ReLU(),
                           gb::nn::Linear(64, 4));
  gb::optim::SGD opt(model->parameters(), gb::optim::SGDOptions(0.05).momentum(0.9));
  gb::amp::GradScaler scaler(gb::amp::GradScalerOptions().init_scale(init_scale));

  Run run;
  run.trajectory = "step 0: " + power_of_two(scaler.get_scale());
  int step = 0;
  while (step < kSteps) {
    for (auto& batch : loader) {
      opt.zero_grad();
      gb::Tensor loss;
      {
        gb::autocast ac(gb::kCPU, gb::kHalf);  // linear runs in float16, cross_entropy in float32
        loss = F::cross_entropy(model(batch.data / 10), batch.target);  // inputs scaled to about [-1, 1]
      }
      scaler.scale(loss).backward();
      double scale = scaler.get_scale();
      if (!scaler.step(opt)) run.skipped.push_back(step);  // a gradient was inf/NaN: no optimizer.step()
      scaler.update();
      if (scaler.get_scale() != scale)
        run.trajectory += ", step " + std::to_string(step + 1) + ": " + power_of_two(scaler.get_scale());
      double l = loss.item<double>();
      if (step == 0) run.first_loss = l;
      if (step >= kSteps - 10) run.final_loss += l / 10;
      if (++step == kSteps) break;
    }
  }
  run.final_scale = scaler.get_scale();
  return run;
}

std::string steps(const std::vector<int>& v) {
  std::string s = std::to_string(v.size());
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : " (steps ") + std::to_string(v[i]);
  return v.empty() ? s : s + ")";
}

}  // namespace

int main() {
  lesson::Lesson lesson("grad_scaler",
                        "with float16 autocast a too-large init_scale overflows the gradients: GradScaler skips "
                        "those steps and halves the scale each time until it fits, then training proceeds as "
                        "with the default 2^16");
  const double kDefault = 65536.0, kTooLarge = std::ldexp(1.0, 24);
  Run good = train(kDefault), big = train(kTooLarge);
  for (const auto& [name, r] :
       {std::pair<const char*, const Run&>{"init_scale 2^16", good}, {"init_scale 2^24", big}}) {
    lesson.measured(std::string(name) + ": skipped steps", steps(r.skipped));
    lesson.measured(std::string(name) + ": scale from each step on (where it changed)", r.trajectory);
    char buf[96];
    std::snprintf(buf, sizeof buf, "%.3f -> %.3f", r.first_loss, r.final_loss);
    lesson.measured(std::string(name) + ": loss at step 0 -> mean of steps 50..59", buf);
  }

  // The claim's shape: the default skipped nothing; the large scale skipped k >= 1 steps, all of them early (in
  // the first 15 of 60), each one halving the scale (no growth happens in 60 steps: growth_interval is 2000), so it
  // settled at 2^24 / 2^k; then both runs learned (last loss below half the first) to within 1.5x of each other.
  const size_t k = big.skipped.size();
  bool early = k >= 1 && big.skipped.back() < 15;
  bool halved = big.final_scale == std::ldexp(kTooLarge, -static_cast<int>(k));
  bool learned = good.final_loss < 0.5 * good.first_loss && big.final_loss < 0.5 * big.first_loss &&
                 big.final_loss < 1.5 * good.final_loss && good.final_loss < 1.5 * big.final_loss;
  bool holds = good.skipped.empty() && early && halved && learned;
  char evidence[300];
  std::snprintf(evidence, sizeof evidence,
                "init_scale 2^24 overflowed and skipped %zu of the first %d steps, halving the scale each time down to "
                "%s; from step %d on every step ran and the loss reached %.3f (2^16: no skip, %.3f)",
                k, k ? big.skipped.back() + 1 : 0, power_of_two(big.final_scale).c_str(),
                k ? big.skipped.back() + 1 : 0, big.final_loss, good.final_loss);
  return lesson.verdict(holds, evidence);
}
