// tests/engine/memory/age_test.cpp — engine/memory/age.cpp: each block remembers the step that allocated it; live
// memory splits into this step, earlier steps and outside any step, by category; what earlier steps kept in the
// categories a step frees, by the op and module that made it, with the steps it spans; the leak rule (kept more
// than half of allocated) and the texts the OOM report and the memory_growth alarm print.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <vector>

#include <glassbox/glassbox.h>

#include "memory_test_util.h"

namespace mem = gb::memory;
using gbtest::KiB;
using gbtest::MiB;
using gbtest::AtStep;

namespace {

struct AgeHolder {
  explicit AgeHolder(mem::CachingAllocator& alloc) : a(alloc) {}
  mem::CachingAllocator& a;
  std::vector<gb::DataPtr> kept;
  void hold(int64_t bytes, mem::Category c, const char* op = "", const char* module = "") {
    mem::CategoryGuard cat(c);
    mem::AllocationContext ctx(op, module);
    kept.push_back(a.allocate(bytes));
  }
  ~AgeHolder() {
    for (auto& p : kept) p.deleter(p.ptr);
  }
};

}  // namespace

TEST_CASE("a block remembers the step that allocated it, in the snapshot; freed blocks and no step read -1") {
  mem::CachingAllocator a(mem::make_meta_raw_allocator(), {});
  AgeHolder h{a};
  h.hold(1 * MiB, mem::Category::parameter);  // no step running
  AtStep at(3);
  h.hold(2 * MiB, mem::Category::activation);
  at = 4;
  h.hold(4 * MiB, mem::Category::temporary);
  gb::DataPtr gone = a.allocate(8 * MiB);
  gone.deleter(gone.ptr);
  std::vector<std::pair<int64_t, int64_t>> live, freed;  // (size, step)
  for (const auto& s : a.snapshot().segments)
    for (const auto& b : s.blocks)
      (b.state == mem::BlockState::active_allocated ? live : freed).emplace_back(b.size, b.step);
  std::sort(live.begin(), live.end());
  CHECK(live == std::vector<std::pair<int64_t, int64_t>>{{1 * MiB, -1}, {2 * MiB, 3}, {4 * MiB, 4}});
  REQUIRE(!freed.empty());
  for (const auto& f : freed) CHECK(f.second == -1);
}

TEST_CASE("memory by age: this step, earlier steps, outside any step, by category; kept only in a step's categories") {
  mem::CachingAllocator a(mem::make_meta_raw_allocator(), {});
  AgeHolder h{a};
  h.hold(3 * MiB, mem::Category::parameter, "empty", "fc1");  // set-up: outside any step
  AtStep at(0);
  h.hold(1 * MiB, mem::Category::gradient, "add", "fc1");         // lives across steps by design: not kept
  h.hold(1 * MiB, mem::Category::optimizer_state, "zeros_like");  // the same
  for (int64_t step = 0; step < 4; ++step) {                       // a leak: each step keeps 2.5 MiB
    at = step;
    h.hold(2 * MiB, mem::Category::activation, "relu", "act1");
    h.hold(512 * KiB, mem::Category::temporary, "addmm", "fc3");
  }
  at = 4;
  h.hold(6 * MiB, mem::Category::activation, "relu", "act1");  // this step's own

  const mem::MemoryByAge age = mem::memory_by_age(a.snapshot(), 4);
  using mem::Age;
  using mem::Category;
  auto at_age = [&](Age g, Category c) { return age.bytes[size_t(g)][size_t(c)]; };
  CHECK(age.step == 4);
  CHECK(age.allocated == 21 * MiB);
  CHECK(age.total(Age::outside_steps) == 3 * MiB);
  CHECK(at_age(Age::outside_steps, Category::parameter) == 3 * MiB);
  CHECK(age.total(Age::this_step) == 6 * MiB);
  CHECK(at_age(Age::this_step, Category::activation) == 6 * MiB);
  CHECK(age.total(Age::earlier_steps) == 12 * MiB);
  CHECK(at_age(Age::earlier_steps, Category::activation) == 8 * MiB);
  CHECK(at_age(Age::earlier_steps, Category::temporary) == 2 * MiB);
  CHECK(at_age(Age::earlier_steps, Category::gradient) == 1 * MiB);
  CHECK(age.kept == 10 * MiB);  // the activations and temporaries of steps 0..3, not the gradient nor the state
  CHECK(age.kept_steps == 4);
  CHECK(age.first_kept_step == 0);
  CHECK(age.last_kept_step == 3);
  CHECK_FALSE(age.leak());  // 10 of 21 MiB: not more than half
  REQUIRE(age.kept_origins.size() == 2);
  CHECK(age.kept_origins[0].op == "relu");
  CHECK(age.kept_origins[0].module == "act1");
  CHECK(age.kept_origins[0].category == Category::activation);
  CHECK(age.kept_origins[0].bytes == 8 * MiB);
  CHECK(age.kept_origins[0].blocks == 4);
  CHECK(age.kept_origins[0].steps == 4);
  CHECK(mem::to_string(age.kept_origins[0]) == "relu in act1 (activation): 8.00 MiB from 4 steps (0..3)");
  CHECK(mem::to_string(age.kept_origins[1]) == "addmm in fc3 (temporary): 2.00 MiB from 4 steps (0..3)");
  CHECK(mem::kept_text(age) ==
        "10.00 MiB (48% of the 21.00 MiB allocated) from 4 earlier steps (0..3): activation 8.00 MiB, temporary "
        "2.00 MiB; made by relu in act1 (activation): 8.00 MiB from 4 steps (0..3); addmm in fc3 (temporary): "
        "2.00 MiB from 4 steps (0..3)");
  CHECK(mem::kept_text(age, 0).ends_with("temporary 2.00 MiB"));

  // Split at step 6 instead: step 4's 6 MiB is now earlier too, 16 of 21 MiB kept: a leak.
  const mem::MemoryByAge later = mem::memory_by_age(a.snapshot(), 6);
  CHECK(later.total(Age::this_step) == 0);
  CHECK(later.kept == 16 * MiB);
  CHECK(later.kept_steps == 5);
  CHECK(later.leak());
  CHECK(mem::to_string(later.kept_origins[0]) == "relu in act1 (activation): 14.00 MiB from 5 steps (0..4)");

  // No step running: everything is outside any step, nothing is kept, never a leak.
  const mem::MemoryByAge none = mem::memory_by_age(a.snapshot(), -1);
  CHECK(none.total(Age::outside_steps) == 21 * MiB);
  CHECK(none.kept == 0);
  CHECK(none.kept_origins.empty());
  CHECK_FALSE(none.leak());
}

TEST_CASE("the texts: steps, categories, an origin without op or module, one earlier step") {
  CHECK(mem::steps_text(0, -1, -1) == "no step");
  CHECK(mem::steps_text(1, 7, 7) == "step 7");
  CHECK(mem::steps_text(3, 2, 9) == "3 steps (2..9)");
  std::array<int64_t, mem::kNumCategories> bytes{};
  CHECK(mem::categories_text(bytes).empty());
  bytes[size_t(mem::Category::input)] = 512;
  bytes[size_t(mem::Category::activation)] = 2 * KiB;
  CHECK(mem::categories_text(bytes) == "activation 2.00 KiB, input 512 bytes");
  CHECK(mem::step_owned(mem::Category::unknown));
  CHECK(mem::step_owned(mem::Category::autograd_detail));
  CHECK_FALSE(mem::step_owned(mem::Category::gradient));
  CHECK_FALSE(mem::step_owned(mem::Category::parameter));
  CHECK_FALSE(mem::step_owned(mem::Category::optimizer_state));

  mem::CachingAllocator a(mem::make_meta_raw_allocator(), {});
  AgeHolder h{a};
  AtStep at(2);
  h.hold(3 * MiB, mem::Category::unknown);
  at = 3;
  const mem::MemoryByAge age = mem::memory_by_age(a.snapshot(), 3);
  CHECK(age.leak());
  REQUIRE(age.kept_origins.size() == 1);
  CHECK(mem::to_string(age.kept_origins[0]) == "no op (unknown): 3.00 MiB from step 2");
  CHECK(mem::kept_text(age) ==
        "3.00 MiB (100% of the 3.00 MiB allocated) from earlier step 2: unknown 3.00 MiB; made by no op (unknown): "
        "3.00 MiB from step 2");
}
