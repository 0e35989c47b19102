// tests/engine/memory/oom_report_test.cpp — the OOM error: PyTorch's first sentence, numbers that equal the
// snapshot's, the layers and largest blocks, advice drawn from the numbers, and a usable allocator afterwards; the
// memory by the step that allocated it, a leak across steps told as one (not one step's peak).
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include <glassbox/glassbox.h>

#include "memory_test_util.h"

namespace mem = gb::memory;
using gbtest::KiB;
using gbtest::MiB;
using gbtest::AtStep;

TEST_CASE("an OOM explains itself with the snapshot's numbers, and the allocator stays usable") {
  mem::AllocatorConfig conf;
  conf.capacity = 64 * MiB;
  mem::CachingAllocator a(mem::make_meta_raw_allocator(), conf);
  std::vector<gb::DataPtr> acts, temps;
  gb::DataPtr weight;
  {
    mem::CategoryGuard cat(mem::Category::activation);
    mem::AllocationContext ctx("aten::relu", "encoder.block1");
    for (int i = 0; i < 3; ++i) acts.push_back(a.allocate(10 * MiB));  // three 10 MiB segments
  }
  {
    mem::CategoryGuard cat(mem::Category::parameter);
    mem::AllocationContext ctx("aten::empty", "encoder.fc");
    weight = a.allocate(12 * MiB);
  }
  {
    mem::CategoryGuard cat(mem::Category::temporary);
    for (int i = 0; i < 8; ++i) temps.push_back(a.allocate(256 * KiB));  // fill one 2 MiB small segment
  }
  for (int i = 0; i < 8; i += 2) temps[size_t(i)].deleter(temps[size_t(i)].ptr);  // four 256 KiB holes

  gb::OomReport r;
  try {
    (void)a.allocate(40 * MiB);
    FAIL("expected an OutOfMemoryError");
  } catch (const gb::OutOfMemoryError& e) {
    r = e.report();
    const std::string m = e.what();
    MESSAGE(m);
    // The numbers equal the snapshot's.
    int64_t allocated = 0, reserved = 0, largest_free = 0, free_cached = 0;
    for (const auto& s : a.snapshot().segments) {
      reserved += s.total_size;
      for (const auto& b : s.blocks) {
        if (b.state == mem::BlockState::active_allocated) allocated += b.size;
        else largest_free = std::max(largest_free, b.size), free_cached += b.size;
      }
    }
    CHECK(r.allocated == allocated);
    CHECK(allocated == 43 * MiB);
    CHECK(r.reserved == reserved);
    CHECK(reserved == 44 * MiB);
    CHECK(r.largest_free_block == largest_free);
    CHECK(largest_free == 256 * KiB);
    CHECK(r.fragmentation == doctest::Approx(1.0 - double(largest_free) / double(free_cached)));
    CHECK(r.fragmentation == doctest::Approx(0.75));
    CHECK(r.free == 20 * MiB);
    CHECK(r.capacity == 64 * MiB);
    CHECK(r.alloc_size == 40 * MiB);
    CHECK(r.allocated_by_category[int(mem::Category::activation)] == 30 * MiB);
    CHECK(r.allocated_by_category[int(mem::Category::parameter)] == 12 * MiB);
    CHECK(r.allocated_by_category[int(mem::Category::temporary)] == 1 * MiB);
    REQUIRE(r.largest_allocations.size() == 5);
    CHECK(r.largest_allocations[0].size == 12 * MiB);
    CHECK(r.largest_allocations[0].module == "encoder.fc");
    CHECK(r.largest_allocations[1].size == 10 * MiB);
    CHECK(r.largest_allocations[1].op == "aten::relu");
    CHECK(r.largest_allocations[4].size == 256 * KiB);

    // PyTorch's first sentence, then ours.
    CHECK(m.rfind("Meta out of memory. Tried to allocate 40.00 MiB. Device meta has a total capacity of 64.00 MiB of "
                  "which 20.00 MiB is free. Of the allocated memory 43.00 MiB is allocated by glassbox, and 1024.00 KiB "
                  "is reserved by glassbox but unallocated. If reserved but unallocated memory is large try setting "
                  "GLASSBOX_ALLOC_CONF=max_split_size_mb:",
                  0) == 0);
    CHECK(m.find("largest free block 256.00 KiB, fragmentation 0.75") != std::string::npos);
    CHECK(m.find("    activation                  30.00 MiB   70%") != std::string::npos);
    CHECK(m.find("12.00 MiB  parameter        op aten::empty, module encoder.fc") != std::string::npos);
    CHECK(m.find("activations are 70% of allocated memory: activation checkpointing or a smaller batch would free "
                 "up to 30.00 MiB") != std::string::npos);
    CHECK(m.find("parameters are 28% of allocated memory: a smaller model, or bfloat16/float16 parameters (half of 12.00 MiB)") != std::string::npos);
    // 1 MiB cached in 256 KiB holes cannot hold 40 MiB anyway: the message says where it is, not "fragmentation".
    CHECK(m.find("fragmentation 0.75:") == std::string::npos);
    CHECK(m.find("1024.00 KiB is reserved but unallocated, in segments that still hold live blocks") != std::string::npos);
  }
  auto s = a.stats();
  CHECK(s.num_ooms == 1);
  CHECK(s.num_alloc_retries == 1);

  // Drop two activations and retry smaller: the retry frees their cached segments and succeeds.
  acts[0].deleter(acts[0].ptr);
  acts[1].deleter(acts[1].ptr);
  gb::DataPtr smaller = a.allocate(24 * MiB);
  CHECK(smaller.ptr != nullptr);
  s = a.stats();
  CHECK(s.num_alloc_retries == 2);
  CHECK(s.num_ooms == 1);
  CHECK(s.reserved_bytes[mem::kAll].current == 48 * MiB);
  CHECK(s.allocated_bytes[mem::kAll].current == 10 * MiB + 12 * MiB + 1 * MiB + 24 * MiB);
  smaller.deleter(smaller.ptr);
  acts[2].deleter(acts[2].ptr);
  weight.deleter(weight.ptr);
  for (int i = 1; i < 8; i += 2) temps[size_t(i)].deleter(temps[size_t(i)].ptr);
  CHECK(a.stats().allocated_bytes[mem::kAll].current == 0);
}

TEST_CASE("when enough is cached but in pieces, the OOM blames fragmentation with the numbers") {
  mem::AllocatorConfig conf;
  conf.capacity = 60 * MiB;
  mem::CachingAllocator a(mem::make_meta_raw_allocator(), conf);
  std::vector<gb::DataPtr> blocks;
  for (int i = 0; i < 9; ++i) blocks.push_back(a.allocate(6 * MiB));  // three 20 MiB segments: 6 + 6 + 6 + 2 free
  for (int i = 1; i < 9; i += 3) blocks[size_t(i)].deleter(blocks[size_t(i)].ptr);  // a 6 MiB hole in each
  try {
    (void)a.allocate(8 * MiB);
    FAIL("expected an OutOfMemoryError");
  } catch (const gb::OutOfMemoryError& e) {
    CHECK(e.reserved() == 60 * MiB);
    CHECK(e.allocated() == 36 * MiB);
    CHECK(e.largest_free_block() == 6 * MiB);
    CHECK(e.report().fragmentation == doctest::Approx(0.75));
    CHECK(std::string(e.what()).find("fragmentation 0.75: 24.00 MiB is cached, enough for this request, but in pieces "
                                     "(the largest is 6.00 MiB) between live blocks") != std::string::npos);
  }
  for (int i = 0; i < 9; ++i)
    if (i % 3 != 1) blocks[size_t(i)].deleter(blocks[size_t(i)].ptr);
}

TEST_CASE("a request larger than the whole device says that no freeing helps") {
  mem::AllocatorConfig conf;
  conf.capacity = 8 * MiB;
  conf.context = 2 * MiB;
  mem::CachingAllocator a(mem::make_meta_raw_allocator(), conf);
  try {
    (void)a.allocate(7 * MiB);
    FAIL("expected an OutOfMemoryError");
  } catch (const gb::OutOfMemoryError& e) {
    const std::string m = e.what();
    CHECK(m.find("Tried to allocate 20.00 MiB") != std::string::npos);  // PyTorch prints the segment size
    CHECK(m.find("Requested 7.00 MiB (7340032 bytes)") != std::string::npos);
    CHECK(m.find("device context                 2.00 MiB") != std::string::npos);
    CHECK(m.find("this one request needs 20.00 MiB but the device has only 6.00 MiB after its context") != std::string::npos);
    CHECK(e.report().largest_allocations.empty());
  }
}

TEST_CASE("the OOM names the modules holding the most activations and what checkpointing them would free") {
  mem::AllocatorConfig conf;
  conf.capacity = 64 * MiB;
  mem::CachingAllocator a(mem::make_meta_raw_allocator(), conf);
  std::vector<gb::DataPtr> keep;
  auto hold = [&](const char* module, int64_t bytes, mem::Category c) {
    mem::CategoryGuard cat(c);
    mem::AllocationContext ctx("addmm", module);
    keep.push_back(a.allocate(bytes));
  };
  hold("layers.0.mlp", 12 * MiB, mem::Category::activation);
  hold("layers.1.mlp", 12 * MiB, mem::Category::activation);
  hold("layers.1.mlp", 4 * MiB, mem::Category::activation);
  hold("layers.2.mlp", 8 * MiB, mem::Category::activation);
  hold("layers.3.mlp", 2 * MiB, mem::Category::activation);
  hold("head", 20 * MiB, mem::Category::parameter);  // not an activation: not listed
  try {
    (void)a.allocate(30 * MiB);
    FAIL("expected an OutOfMemoryError");
  } catch (const gb::OutOfMemoryError& e) {
    const auto& by = e.report().activations_by_module;
    REQUIRE(by.size() == 3);
    CHECK(by[0] == std::pair<std::string, int64_t>{"layers.1.mlp", 16 * MiB});
    CHECK(by[1] == std::pair<std::string, int64_t>{"layers.0.mlp", 12 * MiB});
    CHECK(by[2] == std::pair<std::string, int64_t>{"layers.2.mlp", 8 * MiB});
    CHECK(std::string(e.what()).find("the modules holding the most: layers.1.mlp (16.00 MiB), layers.0.mlp "
                                     "(12.00 MiB), layers.2.mlp (8.00 MiB); checkpointing them would free about "
                                     "36.00 MiB") != std::string::npos);
  }
  for (auto& p : keep) p.deleter(p.ptr);
}

TEST_CASE("ten steps each kept their activations: the OOM is a leak across steps, with the ops, modules and steps") {
  mem::AllocatorConfig conf;
  conf.capacity = 64 * MiB;
  mem::CachingAllocator a(mem::make_meta_raw_allocator(), conf);
  std::vector<gb::DataPtr> keep;
  auto hold = [&](const char* op, const char* module, int64_t bytes, mem::Category c) {
    mem::CategoryGuard cat(c);
    mem::AllocationContext ctx(op, module);
    keep.push_back(a.allocate(bytes));
  };
  // 1 MiB blocks (two to a small segment) and a 12 MiB one: reserved is allocated rounded to 2 MiB
  hold("empty", "fc1", 12 * MiB, mem::Category::parameter);  // set-up, outside any step
  AtStep at(0);
  for (int64_t step = 0; step < 10; ++step) {  // each step keeps its relu's outputs and an addmm output
    at = step;
    for (int i = 0; i < 4; ++i) hold("relu", "act1", 1 * MiB, mem::Category::activation);
    hold("addmm", "fc2", 1 * MiB, mem::Category::temporary);
  }
  at = 10;
  hold("relu", "act1", 1 * MiB, mem::Category::activation);  // step 10's own
  try {
    (void)a.allocate(20 * MiB);
    FAIL("expected an OutOfMemoryError");
  } catch (const gb::OutOfMemoryError& e) {
    const gb::OomReport& r = e.report();
    const std::string m = e.what();
    MESSAGE(m);
    CHECK(m.starts_with("Meta out of memory. Tried to allocate 20.00 MiB. Device meta has a total capacity of 64.00 "
                        "MiB"));
    CHECK(r.allocated == 63 * MiB);
    CHECK(r.by_age.step == 10);
    CHECK(r.by_age.kept == 50 * MiB);
    CHECK(r.by_age.kept_steps == 10);
    CHECK(r.by_age.leak());
    CHECK(r.by_age.total(mem::Age::this_step) == 1 * MiB);
    CHECK(r.by_age.total(mem::Age::outside_steps) == 12 * MiB);
    CHECK(m.find("Live memory by the step that allocated it (step 10 ran out):\n"
                 "  this step                   1024.00 KiB    2%   activation 1024.00 KiB\n"
                 "  earlier steps                 50.00 MiB   79%   activation 40.00 MiB, temporary 10.00 MiB\n"
                 "  outside any step              12.00 MiB   19%   parameter 12.00 MiB\n"
                 "  kept across steps             50.00 MiB   79%   what earlier steps allocated") != std::string::npos);
    CHECK(m.find("What to do:\n  - a leak across steps, not this step's peak: 50.00 MiB (79% of the 63.00 MiB "
                 "allocated) from 10 earlier steps (0..9): activation 40.00 MiB, temporary 10.00 MiB. The tensors "
                 "that hold it were made by:\n"
                 "      relu in act1 (activation): 40.00 MiB from 10 steps (0..9)\n"
                 "      addmm in fc2 (temporary): 10.00 MiB from 10 steps (0..9)\n") != std::string::npos);
    CHECK(m.find("keep loss.item() (a number) rather than the loss, .detach() the outputs you store, run evaluation "
                 "under gb::NoGradGuard") != std::string::npos);
    // the advice for one step's peak is not given: no step's activations are what fills the device
    CHECK(m.find("activation checkpointing or a smaller batch would free") == std::string::npos);
    CHECK(m.find("the modules holding the most") == std::string::npos);
    CHECK(m.find("temporaries are") == std::string::npos);
  }
  at = -1;
  for (auto& p : keep) p.deleter(p.ptr);
}

TEST_CASE("one step's own activations fill the device: checkpointing advice, and earlier steps' bytes noted") {
  mem::AllocatorConfig conf;
  conf.capacity = 64 * MiB;
  mem::CachingAllocator a(mem::make_meta_raw_allocator(), conf);
  std::vector<gb::DataPtr> keep;
  auto hold = [&](const char* op, const char* module, int64_t bytes, mem::Category c) {
    mem::CategoryGuard cat(c);
    mem::AllocationContext ctx(op, module);
    keep.push_back(a.allocate(bytes));
  };
  hold("empty", "fc1", 4 * MiB, mem::Category::parameter);
  AtStep at(0);
  hold("add", "", 8 * MiB, mem::Category::input);  // steps 0 and 1 left a batch each alive
  at = 1;
  hold("add", "", 8 * MiB, mem::Category::input);
  at = 2;
  for (int i = 0; i < 6; ++i) hold("relu", "layers.0", 6 * MiB, mem::Category::activation);  // step 2's peak
  try {
    (void)a.allocate(30 * MiB);
    FAIL("expected an OutOfMemoryError");
  } catch (const gb::OutOfMemoryError& e) {
    const gb::OomReport& r = e.report();
    const std::string m = e.what();
    MESSAGE(m);
    CHECK(r.allocated == 56 * MiB);
    CHECK(r.by_age.step == 2);
    CHECK(r.by_age.kept == 16 * MiB);
    CHECK_FALSE(r.by_age.leak());
    CHECK(m.find("a leak across steps") == std::string::npos);
    CHECK(m.find("  - 16.00 MiB (29% of the 56.00 MiB allocated) from 2 earlier steps (0..1): input 16.00 MiB; made "
                 "by add (input): 16.00 MiB from 2 steps (0..1) is still alive: if it grows step after step it is a "
                 "leak") != std::string::npos);
    CHECK(m.find("  - activations are 64% of allocated memory: activation checkpointing or a smaller batch would "
                 "free up to 36.00 MiB\n") != std::string::npos);
  }
  at = -1;
  for (auto& p : keep) p.deleter(p.ptr);
}
