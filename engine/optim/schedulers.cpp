// engine/optim/schedulers.cpp — StepLR, MultiStepLR, CosineAnnealingLR, LinearLR: get_lr and
// _get_closed_form_lr transcribed from PyTorch 1.13 operation for operation (same order, so the same rounding).
#include "glassbox/optim/schedulers.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace gb::optim {

namespace {
// Python's a // b for b > 0.
int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

template <typename F>
std::vector<double> map_lrs(const std::vector<double>& lrs, F f) {
  std::vector<double> out;
  out.reserve(lrs.size());
  for (size_t i = 0; i < lrs.size(); ++i) out.push_back(f(lrs[i], i));
  return out;
}
}  // namespace

// ---- StepLR ----

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma, int64_t last_epoch)
    : LRScheduler(optimizer, last_epoch), step_size_(step_size), gamma_(gamma) {
  GB_CHECK(step_size > 0, "StepLR: step_size must be a positive number of epochs, got ", step_size);
  initial_step();
}

std::vector<double> StepLR::get_lr() {
  if (last_epoch_ == 0 || last_epoch_ % step_size_ != 0) return current_lrs();
  return map_lrs(current_lrs(), [&](double lr, size_t) { return lr * gamma_; });
}

std::optional<std::vector<double>> StepLR::get_closed_form_lr() const {
  return map_lrs(base_lrs_, [&](double base, size_t) {
    return base * std::pow(gamma_, double(floor_div(last_epoch_, step_size_)));
  });
}

// ---- MultiStepLR ----

MultiStepLR::MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma, int64_t last_epoch)
    : LRScheduler(optimizer, last_epoch), milestones_(std::move(milestones)), gamma_(gamma) {
  std::sort(milestones_.begin(), milestones_.end());
  initial_step();
}

std::vector<double> MultiStepLR::get_lr() {
  auto count = std::count(milestones_.begin(), milestones_.end(), last_epoch_);
  if (count == 0) return current_lrs();
  return map_lrs(current_lrs(), [&](double lr, size_t) { return lr * std::pow(gamma_, double(count)); });
}

std::optional<std::vector<double>> MultiStepLR::get_closed_form_lr() const {
  auto passed = std::upper_bound(milestones_.begin(), milestones_.end(), last_epoch_) - milestones_.begin();
  return map_lrs(base_lrs_, [&](double base, size_t) { return base * std::pow(gamma_, double(passed)); });
}

// ---- CosineAnnealingLR ----

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min, int64_t last_epoch)
    : LRScheduler(optimizer, last_epoch), T_max_(T_max), eta_min_(eta_min) {
  GB_CHECK(T_max > 0, "CosineAnnealingLR: T_max must be a positive number of epochs, got ", T_max);
  initial_step();
}

std::vector<double> CosineAnnealingLR::get_lr() {
  constexpr double pi = std::numbers::pi;
  const double T = double(T_max_), e = double(last_epoch_);
  std::vector<double> lrs = current_lrs();
  if (last_epoch_ == 0) return lrs;
  if (step_count_ == 1 && last_epoch_ > 0)  // resumed with last_epoch: jump straight to the closed form
    return map_lrs(
        lrs, [&](double, size_t i) { return eta_min_ + (base_lrs_[i] - eta_min_) * (1 + std::cos(e * pi / T)) / 2; });
  if ((last_epoch_ - 1 - T_max_) % (2 * T_max_) == 0)  // the restart after the minimum
    return map_lrs(lrs,
                   [&](double lr, size_t i) { return lr + (base_lrs_[i] - eta_min_) * (1 - std::cos(pi / T)) / 2; });
  return map_lrs(lrs, [&](double lr, size_t) {
    return (1 + std::cos(pi * e / T)) / (1 + std::cos(pi * (e - 1) / T)) * (lr - eta_min_) + eta_min_;
  });
}

std::optional<std::vector<double>> CosineAnnealingLR::get_closed_form_lr() const {
  constexpr double pi = std::numbers::pi;
  return map_lrs(base_lrs_, [&](double base, size_t) {
    return eta_min_ + (base - eta_min_) * (1 + std::cos(pi * double(last_epoch_) / double(T_max_))) / 2;
  });
}

// ---- LinearLR ----

LinearLR::LinearLR(Optimizer& optimizer, double start_factor, double end_factor, int64_t total_iters,
                   int64_t last_epoch)
    : LRScheduler(optimizer, last_epoch),
      start_factor_(start_factor),
      end_factor_(end_factor),
      total_iters_(total_iters) {
  GB_CHECK(start_factor > 0 && start_factor <= 1,
           "Starting multiplicative factor expected to be greater than 0 and less or equal to 1. (got ", start_factor,
           ")");
  GB_CHECK(end_factor >= 0 && end_factor <= 1, "Ending multiplicative factor expected to be between 0 and 1. (got ",
           end_factor, ")");
  GB_CHECK(total_iters > 0, "LinearLR: total_iters must be a positive number of epochs, got ", total_iters);
  initial_step();
}

std::vector<double> LinearLR::get_lr() {
  std::vector<double> lrs = current_lrs();
  if (last_epoch_ == 0) return map_lrs(lrs, [&](double lr, size_t) { return lr * start_factor_; });
  if (last_epoch_ > total_iters_) return lrs;
  const double diff = end_factor_ - start_factor_;
  return map_lrs(lrs, [&](double lr, size_t) {
    return lr * (1. + diff / (double(total_iters_) * start_factor_ + double(last_epoch_ - 1) * diff));
  });
}

std::optional<std::vector<double>> LinearLR::get_closed_form_lr() const {
  const double done = double(std::min(total_iters_, last_epoch_));
  return map_lrs(base_lrs_, [&](double base, size_t) {
    return base * (start_factor_ + (end_factor_ - start_factor_) * done / double(total_iters_));
  });
}

}  // namespace gb::optim
