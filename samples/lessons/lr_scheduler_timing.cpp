// samples/lessons/lr_scheduler_timing.cpp — when to call scheduler.step(): once per epoch, as the schedule was
// written, or once per batch.
//
// The claim (PyTorch's "How to adjust learning rate" docs, torch.optim.lr_scheduler, and the tutorials that put
// scheduler.step() at the end of the epoch loop): StepLR(step_size=2) and CosineAnnealingLR(T_max=10) count
// epochs; a loop that steps them after every batch runs the schedule steps_per_epoch times too fast — StepLR has
// decayed by orders of magnitude after one epoch, and the cosine has gone down to eta_min and back up.
//
// The lesson trains the same linear classifier on Blobs (25 batches an epoch, SGD lr 0.1) for 3 epochs four ways
// (StepLR / CosineAnnealingLR, stepped per epoch / per batch) and prints the learning rate the optimizer holds
// after epochs 1, 2 and 3, the smallest rate each run used, and its final loss.
//
//   ./build/samples/lessons/lesson_lr_scheduler_timing
#include <glassbox/data/data.h>
#include <glassbox/glassbox.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "lesson.h"

namespace F = gb::nn::functional;

namespace {

constexpr int kEpochs = 3;
constexpr int64_t kBatch = 16, kBatchesPerEpoch = 25;
constexpr double kLr = 0.1;

struct Run {
  std::vector<double> lr_after_epoch;  // the optimizer's lr after each epoch's last scheduler step
  double min_lr = kLr;                 // the smallest lr an optimizer step used
  double min_lr_epoch1 = kLr;          // ... during epoch 1
  double final_loss = 0;
};

enum class Schedule { step_lr, cosine };

Run train(Schedule schedule, bool per_batch) {
  gb::manual_seed(0);
  auto blobs = std::make_shared<gb::data::datasets::Blobs>(kBatch * kBatchesPerEpoch, 3, 2, 1.0, /*seed=*/0);
  gb::data::DataLoader loader(blobs, gb::data::DataLoaderOptions().batch_size(kBatch).shuffle(true).generator(
                                         std::make_shared<gb::Generator>(0)));
  gb::nn::Linear model(2, 3);
  gb::optim::SGD opt(model->parameters(), gb::optim::SGDOptions(kLr));
  // Both schedules are written in epochs: halve every 2 epochs; half a cosine over 10 epochs.
  std::unique_ptr<gb::optim::LRScheduler> sched;
  if (schedule == Schedule::step_lr)
    sched = std::make_unique<gb::optim::StepLR>(opt, /*step_size=*/2, /*gamma=*/0.5);
  else
    sched = std::make_unique<gb::optim::CosineAnnealingLR>(opt, /*T_max=*/10);

  Run run;
  for (int epoch = 1; epoch <= kEpochs; ++epoch) {
    double loss_sum = 0;
    for (auto& batch : loader) {
      double lr = opt.param_groups()[0].options().get_lr();
      run.min_lr = std::min(run.min_lr, lr);
      if (epoch == 1) run.min_lr_epoch1 = std::min(run.min_lr_epoch1, lr);
      auto loss = F::cross_entropy(model(batch.data), batch.target);
      opt.zero_grad();
      loss.backward();
      opt.step();
      if (per_batch) sched->step();  // the mistake: a schedule in epochs stepped every batch
      loss_sum += loss.item<double>();
    }
    if (!per_batch) sched->step();
    run.lr_after_epoch.push_back(opt.param_groups()[0].options().get_lr());
    run.final_loss = loss_sum / kBatchesPerEpoch;
  }
  return run;
}

std::string lrs(const Run& r) {
  std::string s;
  char buf[48];
  for (size_t e = 0; e < r.lr_after_epoch.size(); ++e) {
    std::snprintf(buf, sizeof buf, "%s%.3g", e ? ", " : "", r.lr_after_epoch[e]);
    s += buf;
  }
  std::snprintf(buf, sizeof buf, " (min used %.3g, last epoch's loss %.3f)", r.min_lr, r.final_loss);
  return s + buf;
}

}  // namespace

int main() {
  lesson::Lesson lesson("lr_scheduler_timing",
                        "a schedule written in epochs (StepLR step_size=2, CosineAnnealingLR T_max=10) stepped "
                        "after every batch instead of every epoch runs far too fast: StepLR's lr collapses within "
                        "epoch 1 and the cosine reaches eta_min within epoch 1");
  Run step_epoch = train(Schedule::step_lr, false), step_batch = train(Schedule::step_lr, true);
  Run cos_epoch = train(Schedule::cosine, false), cos_batch = train(Schedule::cosine, true);
  lesson.measured("batches per epoch", static_cast<double>(kBatchesPerEpoch));
  lesson.measured("StepLR per epoch: lr after epochs 1, 2, 3", lrs(step_epoch));
  lesson.measured("StepLR per batch: lr after epochs 1, 2, 3", lrs(step_batch));
  lesson.measured("CosineAnnealingLR per epoch: lr after epochs 1, 2, 3", lrs(cos_epoch));
  lesson.measured("CosineAnnealingLR per batch: lr after epochs 1, 2, 3", lrs(cos_batch));

  // The claim holds when per-batch StepLR is below 1% of per-epoch after epoch 1, and the per-batch cosine used
  // (nearly) eta_min = 0 during epoch 1 while the per-epoch cosine never went below half the base lr.
  double ratio = step_batch.lr_after_epoch[0] / step_epoch.lr_after_epoch[0];
  bool holds = ratio < 0.01 && cos_batch.min_lr_epoch1 < 1e-3 * kLr && cos_epoch.min_lr > 0.5 * kLr;
  char evidence[256];
  std::snprintf(evidence, sizeof evidence,
                "after epoch 1 StepLR stepped per batch is at %.2g of the per-epoch lr; the per-batch cosine went "
                "down to %.2g during epoch 1 while the per-epoch one never fell below %.3g",
                ratio, cos_batch.min_lr_epoch1, cos_epoch.min_lr);
  return lesson.verdict(holds, evidence);
}
