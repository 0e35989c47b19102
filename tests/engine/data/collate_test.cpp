// tests/engine/data/collate_test.cpp — glassbox/data/collate.h: stacking and recursion into Example/pair/tuple.
#include <doctest/doctest.h>

#include "data_test_util.h"

using gb::data::Example;

TEST_CASE("tensors stack on a new dim 0; Example, pair and tuple recurse; numbers become 1-D tensors") {
  std::vector<Example<>> ex = {{gb::ones({2, 3}), gb::tensor(int64_t(1))}, {gb::zeros({2, 3}), gb::tensor(int64_t(2))}};
  Example<> b = gb::data::collate(ex);
  CHECK(b.data.sizes() == gb::IntArrayRef({2, 2, 3}));
  CHECK(b.target.sizes() == gb::IntArrayRef({2}));
  CHECK(b.target[1].item<int64_t>() == 2);
  CHECK(b.data[0].sum().item<float>() == 6.0f);

  std::vector<std::pair<gb::Tensor, int>> p = {{gb::ones({1}), 3}, {gb::ones({1}), 4}};
  auto pb = gb::data::collate(p);
  CHECK(pb.first.sizes() == gb::IntArrayRef({2, 1}));
  CHECK(pb.second.scalar_type() == gb::kInt64);
  CHECK(pb.second[1].item<int64_t>() == 4);

  std::vector<std::tuple<double, gb::Tensor, Example<gb::Tensor, int64_t>>> t = {
      {0.5, gb::ones({2}), {gb::ones({1}), 7}}, {1.5, gb::ones({2}), {gb::ones({1}), 8}}};
  auto tb = gb::data::collate(t);
  CHECK(std::get<0>(tb).scalar_type() == gb::kDouble);
  CHECK(std::get<1>(tb).sizes() == gb::IntArrayRef({2, 2}));
  CHECK(std::get<2>(tb).target[0].item<int64_t>() == 7);
  static_assert(gb::data::has_tensors_v<Example<>>);
  static_assert(!gb::data::has_tensors_v<int>);

  int n = 0;
  gb::data::for_each_tensor(b, [&](gb::Tensor& x) { ++n, x = x.mul(2); });
  CHECK(n == 2);
  CHECK(b.target[1].item<int64_t>() == 4);
}

TEST_CASE("samples of different shapes: PyTorch's stack error") {
  std::vector<gb::Tensor> v = {gb::ones({3}), gb::ones({4})};
  CHECK_THROWS_WITH(gb::data::collate(v), gbtest::contains("stack expects each tensor to be equal size"));
}
