// tests/engine/data/batch_transform_test.cpp — glassbox/data/batch_transform.h: libtorch's transforms (Lambda,
// BatchLambda, Collate, Stack<>, TensorLambda) and transforms.h's Normalize<> used the libtorch way.
#include <doctest/doctest.h>

#include "data_test_util.h"

namespace T = gb::data::transforms;
using gb::data::Example;

TEST_CASE("Transform applies per example, BatchTransform to the whole batch") {
  T::Lambda<Example<>> plus_one([](Example<> e) { return Example<>{e.data + 1, e.target}; });
  std::vector<Example<>> batch = {{gb::tensor({1.0}), gb::tensor(int64_t(0))}, {gb::tensor({2.0}), gb::tensor(int64_t(1))}};
  std::vector<Example<>> out = plus_one.apply_batch(batch);
  CHECK(out[1].data[0].item<double>() == 3.0);
  T::BatchLambda<std::vector<Example<>>, size_t> count([](std::vector<Example<>> b) { return b.size(); });
  CHECK(count.apply_batch(batch) == 2);
  T::Collate<Example<>> first([](std::vector<Example<>> b) { return b.front(); });
  CHECK(first.apply_batch(batch).data[0].item<double>() == 1.0);
}

TEST_CASE("Stack<> stacks data and targets along a new dim 0") {
  std::vector<Example<>> batch;
  for (int i = 0; i < 3; ++i) batch.push_back({gb::full({1, 2, 2}, double(i)), gb::tensor(int64_t(i))});
  Example<> b = T::Stack<>().apply_batch(batch);
  CHECK(b.data.sizes() == gb::IntArrayRef({3, 1, 2, 2}));
  CHECK(b.data[2][0][1][1].item<float>() == 2.0f);
  CHECK(b.target.sizes() == gb::IntArrayRef({3}));
  CHECK(b.target.scalar_type() == gb::kLong);
}

TEST_CASE("Normalize<>: libtorch's spelling on examples; torchvision's per-channel form; float32 and float64 agree") {
  T::Normalize<> norm(0.5, 0.25);
  Example<> e = norm.apply({gb::full({1, 2, 2}, 1.0), gb::tensor(int64_t(3))});
  CHECK(e.data[0][1][0].item<float>() == doctest::Approx(2.0));
  CHECK(e.target.item<int64_t>() == 3);

  gb::Tensor x = gb::rand({2, 3, 4}, gb::kDouble);
  T::Normalize per_channel({0.1, 0.2}, {0.5, 2.0});
  gb::Tensor y64 = per_channel(x);  // the broadcast path (float64)
  gb::Tensor y32 = per_channel(x.to(gb::kFloat));  // the loop path (float32 (C,H,W))
  CHECK(y64.scalar_type() == gb::kDouble);
  CHECK(gb::allclose(y64, (x - gb::tensor({0.1, 0.2}, gb::kDouble).view({2, 1, 1})) /
                              gb::tensor({0.5, 2.0}, gb::kDouble).view({2, 1, 1})));
  CHECK(gb::allclose(y32.to(gb::kDouble), y64, 1e-6, 1e-6));
  // a (N,C,H,W) batch normalizes per channel too, and the gradient flows
  gb::Tensor b = gb::rand({3, 2, 2, 2}, gb::kDouble).requires_grad_();
  per_channel(b).sum().backward();
  CHECK(b.grad()[0][1][0][0].item<double>() == doctest::Approx(0.5));
  CHECK(b.grad()[2][0][1][1].item<double>() == doctest::Approx(2.0));
  CHECK_THROWS_WITH(per_channel(gb::rand({3, 2, 2})), gbtest::contains("2 means for 3 channels"));
  CHECK_THROWS_WITH(T::Normalize<>(0.0, 0.0), gbtest::contains("std evaluated to zero"));
}

TEST_CASE("TensorLambda transforms an example's data, its target passes through") {
  T::TensorLambda<> neg([](gb::Tensor t) { return -t; });
  Example<> e = neg.apply({gb::ones({2}), gb::tensor(int64_t(4))});
  CHECK(e.data[1].item<float>() == -1.0f);
  CHECK(e.target.item<int64_t>() == 4);
}
