// tests/engine/memory/summary_test.cpp — the memory_summary() table: PyTorch's rows and units, then glassbox's.
#include <doctest/doctest.h>

#include <sstream>
#include <vector>

#include <glassbox/glassbox.h>

namespace mem = gb::memory;

TEST_CASE("the summary is torch.cuda.memory_summary()'s table, 77 characters wide, with the allocator's numbers") {
  mem::CachingAllocator a(mem::make_meta_raw_allocator());
  gb::DataPtr small = a.allocate(1000), large = a.allocate(3 << 20);
  const std::string s = mem::summary(a.stats(), gb::Device(gb::kMeta));
  MESSAGE(s);
  std::istringstream in(s);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  REQUIRE(lines.size() > 30);
  for (const auto& l : lines) {
    CHECK(l.size() == 77);
    CHECK(l.front() == '|');
    CHECK(l.back() == '|');
  }
  CHECK(s.find("glassbox memory summary, device meta") != std::string::npos);
  CHECK(s.find("OOMs: 0") != std::string::npos);
  // 1024 + 3 MiB allocated: the "all" value picks KiB for the column (PyTorch scales above 768 KiB).
  CHECK(s.find("| Allocated memory      |   3073 KiB |   3073 KiB |   3073 KiB |      0 B   |") != std::string::npos);
  CHECK(s.find("|       from large pool |   3072 KiB |   3072 KiB |   3072 KiB |      0 B   |") != std::string::npos);
  CHECK(s.find("|       from small pool |      1 KiB |      1 KiB |      1 KiB |      0 B   |") != std::string::npos);
  CHECK(s.find("| Reserved memory       |  22528 KiB |") != std::string::npos);
  CHECK(s.find("| Allocations           |       2    |       2    |       2    |       0    |") != std::string::npos);
  CHECK(s.find("| Alloc: temporary      |   3073 KiB |") != std::string::npos);
  CHECK(s.find("| Reserved unallocated  |  19455 KiB |") != std::string::npos);
  small.deleter(small.ptr);
  large.deleter(large.ptr);
}

TEST_CASE("the per-device summary names the device and, for cuda, PyTorch's GPU rows") {
  const std::string s = mem::summary(mem::MemoryStats{}, gb::Device(gb::kCUDA, 0));
  CHECK(s.find("| GPU reserved memory   |") != std::string::npos);
  CHECK(s.find("Oversize GPU segments") != std::string::npos);
  CHECK(mem::summary(gb::Device(gb::kMeta)).find("device meta") != std::string::npos);
}
