// samples/lessons/shuffle_scope.cpp — what DataLoader(shuffle=true) permutes: the whole dataset, not the order
// inside each batch.
//
// The claim (a wrong one that circulates in beginner material: shuffle=True only shuffles the samples within a
// batch, the batches themselves stay the same): if it held, sample i would always land in batch i / batch_size.
// PyTorch's RandomSampler draws a permutation of every index each epoch and BatchSampler cuts it into batches, so
// samples move across batches, and differently every epoch. glassbox's loader does the same.
//
// The lesson loads a dataset whose sample i is the number i (64 samples, batch 8, shuffle) for two epochs, records
// the batch each sample lands in, and prints batch 0 of each epoch, the share of samples outside their unshuffled
// batch, and the share whose batch changed between the epochs.
//
//   ./build/samples/lessons/lesson_shuffle_scope
#include <glassbox/data/data.h>
#include <glassbox/glassbox.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "lesson.h"

namespace {

constexpr int64_t kSamples = 64, kBatch = 8;

// Sample i is the number i (data and target alike).
struct Numbers : gb::data::Dataset<gb::data::Example<>> {
  gb::data::Example<> get(int64_t i) override { return {gb::tensor(i), gb::tensor(i)}; }
  int64_t size() const override { return kSamples; }
};

std::string list(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

}  // namespace

int main() {
  lesson::Lesson lesson("shuffle_scope",
                        "DataLoader's shuffle only permutes the samples within each batch: sample i stays in batch "
                        "i / batch_size");
  gb::data::DataLoader loader(
      std::make_shared<Numbers>(),
      gb::data::DataLoaderOptions().batch_size(kBatch).shuffle(true).generator(std::make_shared<gb::Generator>(0)));
  // batch_of[epoch][i]: the batch sample i landed in (-1: never seen).
  std::vector<std::vector<int64_t>> batch_of(2, std::vector<int64_t>(kSamples, -1));
  bool each_once = true;  // every sample exactly once per epoch: a permutation, as a sampler must give
  for (int epoch = 0; epoch < 2; ++epoch) {
    int64_t b = 0;
    for (auto& batch : loader) {
      std::vector<int64_t> ids;
      for (int64_t k = 0; k < batch.data.size(0); ++k) {
        int64_t i = batch.data[k].item<int64_t>();
        ids.push_back(i);
        if (i < 0 || i >= kSamples || batch_of[epoch][i] != -1)
          each_once = false;
        else
          batch_of[epoch][i] = b;
      }
      if (b == 0) lesson.measured("epoch " + std::to_string(epoch + 1) + ", batch 0 holds samples", list(ids));
      ++b;
    }
  }
  int64_t moved = 0, changed = 0;
  for (int64_t i = 0; i < kSamples; ++i) {
    if (batch_of[0][i] == -1 || batch_of[1][i] == -1) each_once = false;
    moved += batch_of[0][i] != i / kBatch;
    changed += batch_of[0][i] != batch_of[1][i];
  }
  if (!each_once) {
    std::printf("measurement invalid: an epoch did not yield every sample exactly once\n");
    return 1;
  }
  double moved_share = double(moved) / kSamples, changed_share = double(changed) / kSamples;
  lesson.measured("epoch 1: samples outside their unshuffled batch (i / 8)", lesson::percent(moved_share));
  lesson.measured("samples whose batch changed from epoch 1 to epoch 2", lesson::percent(changed_share));

  // The claim predicts 0% for both: every sample stays in batch i / batch_size.
  bool holds = moved == 0 && changed == 0;
  char evidence[200];
  std::snprintf(evidence, sizeof evidence,
                "%lld of %lld samples left their unshuffled batch in epoch 1 and %lld changed batch between the "
                "epochs%s",
                (long long)moved, (long long)kSamples, (long long)changed,
                holds ? "" : ": shuffle permutes the whole dataset, not the inside of a batch");
  return lesson.verdict(holds, evidence);
}
