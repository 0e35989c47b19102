// tests/engine/ops/loops_test.cpp — StridedLoop: broadcast strides, merged dims, runs that cover every element once
// in row-major order, and typed loops that give the same answer on every layout and thread count.
#include <numeric>
#include <string>
#include <vector>

#include "core/cpu_isa.h"
#include "ops/loops.h"
#include "support/check.h"

TEST_CASE("contiguous operands merge into one run") {
  auto out = gb::empty({4, 5, 6});
  auto a = gb::ones({4, 5, 6});
  gb::detail::StridedLoop loop(out, {&a});
  CHECK(loop.ndim() == 1);
  CHECK(loop.numel() == 120);
  int runs = 0;
  loop.run(0, loop.numel(), [&](char**, const int64_t* s, int64_t n) {
    ++runs;
    CHECK(n == 120);
    CHECK(s[0] == 4);
    CHECK(s[1] == 4);
  });
  CHECK(runs == 1);
}

TEST_CASE("broadcast inputs get stride 0 and runs follow row-major order") {
  auto out = gb::empty({3, 4}, gb::kInt64);
  auto row = gb::arange(4);                // broadcast over rows
  auto col = gb::arange(3).view({3, 1});   // broadcast over columns
  gb::detail::StridedLoop loop(out, {&row, &col});
  CHECK(loop.ndim() == 2);
  std::vector<int64_t> seen;
  loop.run(0, loop.numel(), [&](char** p, const int64_t* s, int64_t n) {
    CHECK(s[2] == 0);  // col is constant along the inner dim
    for (int64_t i = 0; i < n; ++i)
      seen.push_back(*reinterpret_cast<int64_t*>(p[2] + i * s[2]) * 10 + *reinterpret_cast<int64_t*>(p[1] + i * s[1]));
  });
  CHECK(seen == std::vector<int64_t>{0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23});
  // a sub-range starts mid-row
  std::vector<int64_t> part;
  loop.run(5, 10, [&](char** p, const int64_t* s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) part.push_back(*reinterpret_cast<int64_t*>(p[1] + i * s[1]));
  });
  CHECK(part == std::vector<int64_t>{1, 2, 3, 0, 1});
}

TEST_CASE("typed loops agree across layouts and thread counts") {
  gb::manual_seed(8);
  auto a = gb::randn({257, 301});
  auto b = gb::randn({301});
  auto ref = gb::empty({257, 301});
  gb::set_num_threads(1);
  gb::detail::binary_loop<float, float, float>(ref, a, b, [](float x, float y) { return x * y + 1; });
  gb::set_num_threads(2);
  auto par = gb::empty({257, 301});
  gb::detail::binary_loop<float, float, float>(par, a, b, [](float x, float y) { return x * y + 1; });
  CHECK(gb::equal(ref, par));
  auto at = a.t().contiguous().t();  // same values, column-major
  auto strided = gb::empty({257, 301});
  gb::detail::binary_loop<float, float, float>(strided, at, b, [](float x, float y) { return x * y + 1; });
  CHECK(gb::equal(ref, strided));
  auto u = gb::empty({257, 301});
  gb::detail::unary_loop<float, float>(u, a, [](float x) { return x + 1; });
  CHECK(gb::allclose(u, a + 1));
  auto t3 = gb::empty({257, 301});
  gb::detail::ternary_loop<float, float, float, float>(t3, a, b, a, [](float x, float y, float z) { return x * y + z; });
  CHECK(gb::allclose(t3, a * b + a));
  auto empty_out = gb::empty({0, 3});
  auto empty_in = gb::empty({0, 3});
  gb::detail::StridedLoop none(empty_out, {&empty_in});
  int calls = 0;
  none.run(0, none.numel(), [&](char**, const int64_t*, int64_t) { ++calls; });
  CHECK(calls == 0);
}

TEST_CASE("many dimensions: merged ones of any number run; more than 25 that cannot merge are refused by name") {
  // 26 dims of size 2 (64 MiB of int8), contiguous: they merge into one run
  std::vector<int64_t> sizes(26, 2);
  auto a = gb::empty(sizes, gb::kInt8);
  auto out = gb::empty(sizes, gb::kInt8);
  gb::detail::StridedLoop merged(out, {&a});
  CHECK(merged.ndim() == 1);
  // 26 dims of size 2 with every other one broadcast: the output's dims cannot merge across the input's zeros
  std::vector<int64_t> in_sizes(26, 2);
  for (size_t d = 0; d < in_sizes.size(); d += 2) in_sizes[d] = 1;
  std::vector<int64_t> out_sizes(26, 2);
  auto b = gb::zeros(in_sizes, gb::kInt8);
  auto big = gb::empty(out_sizes, gb::kInt8);
  CHECK_THROWS_WITH_AS(gb::detail::StridedLoop(big, {&b}), doctest::Contains("at most 25 dimensions"), gb::Error);
  // 25 such dims are fine, and every element is visited once
  std::vector<int64_t> in25(25, 2), out25(25, 2);
  for (size_t d = 0; d < in25.size(); d += 2) in25[d] = 1;
  auto c = gb::ones(in25, gb::kInt8);
  auto o25 = gb::empty(out25, gb::kInt8);
  gb::detail::StridedLoop loop(o25, {&c});
  CHECK(loop.ndim() == 25);
  int64_t visited = 0;
  loop.run(0, loop.numel(), [&](char**, const int64_t*, int64_t n) { visited += n; });
  CHECK(visited == (int64_t(1) << 25));
}

TEST_CASE("the contiguous runs give the same bits on every instruction set (no multiply-add is contracted)") {
  // Each copy of a run is compiled for its ISA with the op's lambda inlined; with -ffp-contract=off none of them
  // fuses x + a * y into an FMA, so all round alike. A contracted build fails here on AVX2 and AVX-512.
  gb::manual_seed(7);
  gb::Tensor x = gb::randn({1000, 37}), y = gb::randn({1000, 37}), z = gb::randn({1000, 37});
  auto ops = [&] {
    std::vector<gb::Tensor> r;
    r.push_back(x.add(y, 0.3));       // x + 0.3 * y
    r.push_back(gb::addcmul(x, y, z, 0.7));
    r.push_back(gb::addcdiv(x, y, z.abs() + 1, -0.2));
    r.push_back(x * y + z);           // two ops: rounds between them anyway
    r.push_back((x * 1.7).relu());
    r.push_back(gb::lerp(x, y, 0.25));
    r.push_back(x.to(gb::kDouble).add(y.to(gb::kDouble), 0.1).to(gb::kFloat));
    return r;
  };
  std::vector<gb::Tensor> want;
  {
    gb::detail::CpuIsaGuard guard(gb::detail::CpuIsa::baseline);
    want = ops();
  }
  for (auto isa : {gb::detail::CpuIsa::avx2, gb::detail::CpuIsa::avx512}) {
    if (static_cast<int>(isa) > static_cast<int>(gb::detail::cpu_isa_supported())) continue;
    CAPTURE(std::string(gb::detail::cpu_isa_name(isa)));
    gb::detail::CpuIsaGuard guard(isa);
    std::vector<gb::Tensor> got = ops();
    for (size_t i = 0; i < got.size(); ++i) {
      CAPTURE(i);
      CHECK(gb::equal(got[i], want[i]));
    }
  }
}
