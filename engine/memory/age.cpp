// engine/memory/age.cpp — live memory by the step that allocated it, and what earlier steps kept, by origin
// (glassbox/memory/age.h). Reads a snapshot; the allocator only stores each block's step.
#include "glassbox/memory/age.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "glassbox/memory/stats.h"

namespace gb::memory {

const char* to_string(Age a) {
  switch (a) {
    case Age::this_step: return "this step";
    case Age::earlier_steps: return "earlier steps";
    case Age::outside_steps: return "outside any step";
  }
  return "?";
}

bool step_owned(Category c) {
  return c == Category::activation || c == Category::temporary || c == Category::autograd_detail ||
         c == Category::input || c == Category::unknown;
}

int64_t MemoryByAge::total(Age a) const {
  int64_t t = 0;
  for (int64_t b : bytes[size_t(a)]) t += b;
  return t;
}

namespace {

struct Origin {
  std::array<int64_t, kNumCategories> bytes{};
  int64_t blocks = 0;
  std::vector<int64_t> steps;
};

// Distinct values of a step list (sorted in place), with the first and last.
void count_steps(std::vector<int64_t>& steps, int64_t& n, int64_t& first, int64_t& last) {
  std::sort(steps.begin(), steps.end());
  n = int64_t(std::unique(steps.begin(), steps.end()) - steps.begin());
  first = n > 0 ? steps.front() : -1;
  last = n > 0 ? steps[size_t(n - 1)] : -1;
}

}  // namespace

MemoryByAge memory_by_age(const Snapshot& snapshot, int64_t step) {
  MemoryByAge age;
  age.step = step;
  std::map<std::pair<std::string, std::string>, Origin> origins;
  std::vector<int64_t> kept_steps;
  for (const SegmentSnapshot& seg : snapshot.segments)
    for (const BlockSnapshot& b : seg.blocks) {
      if (b.state != BlockState::active_allocated) continue;
      age.allocated += b.size;
      const Age a = step < 0 || b.step < 0 ? Age::outside_steps
                    : b.step == step       ? Age::this_step
                                           : Age::earlier_steps;
      age.bytes[size_t(a)][size_t(b.category)] += b.size;
      if (a != Age::earlier_steps || !step_owned(b.category)) continue;
      age.kept += b.size;
      kept_steps.push_back(b.step);
      Origin& o = origins[{b.op, b.module}];
      o.bytes[size_t(b.category)] += b.size;
      ++o.blocks;
      o.steps.push_back(b.step);
    }
  count_steps(kept_steps, age.kept_steps, age.first_kept_step, age.last_kept_step);
  for (auto& [key, o] : origins) {
    KeptOrigin k;
    k.op = key.first;
    k.module = key.second;
    k.blocks = o.blocks;
    int best = 0;
    for (int c = 0; c < kNumCategories; ++c) {
      k.bytes += o.bytes[size_t(c)];
      if (o.bytes[size_t(c)] > o.bytes[size_t(best)]) best = c;
    }
    k.category = Category(best);
    count_steps(o.steps, k.steps, k.first_step, k.last_step);
    age.kept_origins.push_back(std::move(k));
  }
  std::stable_sort(age.kept_origins.begin(), age.kept_origins.end(),
                   [](const KeptOrigin& a, const KeptOrigin& b) { return a.bytes > b.bytes; });
  if (age.kept_origins.size() > kKeptOrigins) age.kept_origins.resize(kKeptOrigins);
  return age;
}

std::string steps_text(int64_t steps, int64_t first, int64_t last) {
  if (steps <= 0) return "no step";
  if (steps == 1) return "step " + std::to_string(first);
  return std::to_string(steps) + " steps (" + std::to_string(first) + ".." + std::to_string(last) + ")";
}

std::string categories_text(const std::array<int64_t, kNumCategories>& bytes) {
  std::vector<int> order;
  for (int c = 0; c < kNumCategories; ++c)
    if (bytes[size_t(c)] > 0) order.push_back(c);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return bytes[size_t(a)] > bytes[size_t(b)]; });
  std::string s;
  for (int c : order) s += (s.empty() ? "" : ", ") + std::string(to_string(Category(c))) + " " + format_size(bytes[size_t(c)]);
  return s;
}

std::string to_string(const KeptOrigin& o) {
  return (o.op.empty() ? std::string("no op") : o.op) + (o.module.empty() ? "" : " in " + o.module) + " (" +
         to_string(o.category) + "): " + format_size(o.bytes) + " from " + steps_text(o.steps, o.first_step, o.last_step);
}

std::string kept_text(const MemoryByAge& age, std::size_t origins) {
  const int pct = age.allocated > 0 ? int(std::lround(100.0 * double(age.kept) / double(age.allocated))) : 0;
  std::array<int64_t, kNumCategories> kept_by_category{};
  for (int c = 0; c < kNumCategories; ++c)
    if (step_owned(Category(c)))
      kept_by_category[size_t(c)] = age.bytes[size_t(Age::earlier_steps)][size_t(c)];
  const std::string steps =
      age.kept_steps == 1 ? "earlier step " + std::to_string(age.first_kept_step)
                          : std::to_string(age.kept_steps) + " earlier steps (" + std::to_string(age.first_kept_step) +
                                ".." + std::to_string(age.last_kept_step) + ")";
  std::string s = format_size(age.kept) + " (" + std::to_string(pct) + "% of the " + format_size(age.allocated) +
                  " allocated) from " + steps + ": " + categories_text(kept_by_category);
  for (std::size_t i = 0; i < age.kept_origins.size() && i < origins; ++i)
    s += (i ? "; " : "; made by ") + to_string(age.kept_origins[i]);
  return s;
}

}  // namespace gb::memory
