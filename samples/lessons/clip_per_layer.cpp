// samples/lessons/clip_per_layer.cpp — global gradient clipping keeps the layers' proportions; per-layer does not.
//
// The claim, from the torch.nn.utils.clip_grad_norm_ docs ("the norm is computed over all gradients together, as
// if they were concatenated into a single vector") and training tutorials that warn against clipping each layer on
// its own: clip_grad_norm_(all parameters) scales every gradient by one factor, so the direction of the update and
// the ratio between the layers' gradient norms are kept; calling it on each layer separately clips each layer to
// max_norm, which flattens the ratios (and changes the direction). Measured on an MLP 16-64-64-1 after one backward
// of an MSE loss, with max_norm = 1: each layer's gradient norm (weight and bias together) before and after either
// way, from the same gradients.
//
//   ./build/samples/lessons/lesson_clip_per_layer
//
// Prints the norms and each layer's ratio to the last layer's; the verdict holds when global clipping kept every
// ratio (within 1e-4 relative) and per-layer clipping moved at least one by more than 1%.
#include <glassbox/glassbox.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "lesson.h"

namespace {

// The 2-norm of a layer's gradients, all its parameters together.
double grad_norm(const std::vector<gb::Tensor>& params) {
  double sq = 0;
  for (const auto& p : params) sq += p.grad().pow(2).sum().item<double>();
  return std::sqrt(sq);
}

std::vector<double> norms(const std::vector<std::vector<gb::Tensor>>& layers) {
  std::vector<double> out;
  for (const auto& l : layers) out.push_back(grad_norm(l));
  return out;
}

std::string list(const std::vector<double>& v) {
  std::string s;
  for (double x : v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%.4g", s.empty() ? "" : ", ", x);
    s += buf;
  }
  return s;
}

std::vector<double> ratios(const std::vector<double>& n) {  // each layer's norm over the last layer's
  std::vector<double> r;
  for (double x : n) r.push_back(x / n.back());
  return r;
}

double max_relative_change(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::fmax(m, std::fabs(b[i] - a[i]) / std::fabs(a[i]));
  return m;
}

}  // namespace

int main() {
  lesson::Lesson l("clip_per_layer",
                   "clip_grad_norm_ over all parameters keeps the ratio between the layers' gradient norms; "
                   "clipping each layer on its own does not");
  gb::manual_seed(0);
  gb::nn::Linear fc1(16, 64), fc2(64, 64), fc3(64, 1);
  gb::Tensor x = gb::randn({128, 16});      // (N, D)
  gb::Tensor y = 10 * gb::randn({128, 1});  // a large target: gradients well above max_norm
  gb::Tensor loss = (fc3(gb::relu(fc2(gb::relu(fc1(x))))) - y).pow(2).mean();
  loss.backward();

  const std::vector<std::vector<gb::Tensor>> layers = {fc1->parameters(), fc2->parameters(), fc3->parameters()};
  std::vector<gb::Tensor> all, saved;
  for (const auto& layer : layers)
    for (const auto& p : layer) all.push_back(p), saved.push_back(p.grad().clone());
  auto restore = [&] {
    for (size_t i = 0; i < all.size(); ++i) all[i].mutable_grad().copy_(saved[i]);
  };
  const double max_norm = 1.0;

  const std::vector<double> before = norms(layers);
  l.measured("layer grad norms before (fc1, fc2, fc3)", list(before));
  l.measured("ratios to fc3 before", list(ratios(before)));

  gb::nn::utils::clip_grad_norm_(all, max_norm);
  const std::vector<double> global = norms(layers);
  l.measured("after global clip_grad_norm_(all, 1)", list(global));
  l.measured("ratios to fc3 after global", list(ratios(global)));

  restore();
  for (const auto& layer : layers) gb::nn::utils::clip_grad_norm_(layer, max_norm);
  const std::vector<double> per_layer = norms(layers);
  l.measured("after per-layer clip_grad_norm_(layer, 1)", list(per_layer));
  l.measured("ratios to fc3 after per-layer", list(ratios(per_layer)));

  const double global_change = max_relative_change(ratios(before), ratios(global));
  const double per_layer_change = max_relative_change(ratios(before), ratios(per_layer));
  l.measured("largest relative change of a ratio: global", global_change);
  l.measured("largest relative change of a ratio: per-layer", per_layer_change);
  char change[32];
  std::snprintf(change, sizeof change, "%.2g", global_change);
  return l.verdict(global_change < 1e-4 && per_layer_change > 0.01,
                   std::string("global clipping changed the ratios by at most ") + change +
                       " (relative), per-layer clipping by up to " + lesson::percent(per_layer_change));
}
