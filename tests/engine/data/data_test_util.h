// tests/engine/data/data_test_util.h — small datasets and helpers shared by the data tests.
#pragma once

#include <dirent.h>
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include <glassbox/data/data.h>
#include <glassbox/glassbox.h>

namespace gbtest {

// doctest::Contains of a std::string (doctest's takes its own String).
inline doctest::Contains contains(const std::string& s) { return doctest::Contains(doctest::String(s.c_str())); }

// Sample i: data = (4) floats: i, then three draws from the sample's generator (gb::rand and sample_generator());
// target = i. Optionally slow, or throwing at one index.
struct RandomData : gb::data::Dataset<gb::data::Example<>> {
  int64_t n = 40;
  int sleep_us = 0;
  int64_t throw_at = -1;
  std::function<int(int64_t)> sleep_for;  // per-index sleep in us, overrides sleep_us
  explicit RandomData(int64_t n_ = 40) : n(n_) {}
  gb::data::Example<> get(int64_t i) override {
    int us = sleep_for ? sleep_for(i) : sleep_us;
    if (us) std::this_thread::sleep_for(std::chrono::microseconds(us));
    if (i == throw_at) throw std::runtime_error("boom at index " + std::to_string(i));
    gb::Tensor r = gb::rand({2});
    float extra = gb::data::sample_generator().uniform_float();
    gb::Tensor data = gb::cat({gb::tensor({float(i)}), r, gb::tensor({extra})});
    return {data, gb::tensor(i)};
  }
  int64_t size() const override { return n; }
};

inline int thread_count() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') ++n;
    closedir(d);
  }
  return n;
}

// thread_count() once it reaches `want`, or after 2 s, whatever it is then. A joined thread can still be listed for
// a moment: pthread_join returns when the thread has signalled its exit, before the kernel has reaped its task.
inline int thread_count_settled(int want) {
  int n = thread_count();
  for (int i = 0; i < 200 && n != want; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    n = thread_count();
  }
  return n;
}

// The baseline for a thread-count check: thread_count() once it has stayed the same for 100 ms (at most 2 s). A test
// that starts right after another one joined its threads can otherwise count a task the kernel has not yet reaped
// (CI saw "3 == 4": the baseline held the previous test's last worker).
inline int thread_count_quiet() {
  int n = thread_count();
  for (int i = 0, same = 0; i < 200 && same < 10; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    int m = thread_count();
    same = m == n ? same + 1 : 0;
    n = m;
  }
  return n;
}

// The bytes of a tensor (contiguous copy), for bit-for-bit comparisons.
inline std::vector<unsigned char> bytes(const gb::Tensor& t) {
  gb::Tensor c = t.contiguous();
  auto p = static_cast<const unsigned char*>(c.data_ptr());
  return std::vector<unsigned char>(p, p + c.nbytes());
}

}  // namespace gbtest
