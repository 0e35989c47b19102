// tests/engine/autograd/saved_tensor_hooks_test.cpp — pack/unpack around what autograd saves: call counts,
// values, nesting, the tensor not being held, the in-place check, and the errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>

#include "glassbox/autograd/saved_tensor_hooks.h"
#include "support/check.h"

namespace {
const auto f64 = gb::TensorOptions().dtype(gb::kDouble);
}

TEST_CASE("pack runs once per saved tensor at forward, unpack once per saved tensor at backward") {
  auto x = gb::tensor({1.0, 2.0, 3.0}, f64).requires_grad_(true);
  auto y = gb::tensor({4.0, 5.0, 6.0}, f64).requires_grad_(true);
  int packs = 0, unpacks = 0;
  std::vector<std::vector<double>> packed_values;
  gb::Tensor z;
  {
    gb::autograd::SavedTensorHooks hooks(
        [&](const gb::Tensor& t) -> std::any {
          ++packs;
          packed_values.push_back(gbtest::values(t));
          return t;
        },
        [&](const std::any& p) {
          ++unpacks;
          return std::any_cast<gb::Tensor>(p);
        });
    z = (x * y).exp().sum();  // mul saves x and y; exp saves its output; sum saves nothing
  }
  CHECK(packs == 3);
  CHECK(unpacks == 0);
  REQUIRE(packed_values.size() == 3);
  CHECK(packed_values[0] == std::vector<double>{1, 2, 3});
  CHECK(packed_values[1] == std::vector<double>{4, 5, 6});
  CHECK(packed_values[2][0] == doctest::Approx(std::exp(4.0)));
  z.backward();
  CHECK(unpacks == 3);
  // d/dx exp(xy) = y exp(xy)
  gbtest::check_values(x.grad(), {4 * std::exp(4.0), 5 * std::exp(10.0), 6 * std::exp(18.0)}, 1e-9 * std::exp(18.0));
  gbtest::check_values(y.grad(), {1 * std::exp(4.0), 2 * std::exp(10.0), 3 * std::exp(18.0)}, 1e-9 * std::exp(18.0));
  // outside the guard nothing is hooked
  (x * y).sum().backward();
  CHECK(packs == 3);
  CHECK(unpacks == 3);
}

TEST_CASE("the packed value is all that is kept: unpack may rebuild the tensor") {
  auto x = gb::tensor({0.5, 1.5}, f64).requires_grad_(true);
  std::map<int, std::vector<double>> store;  // the hook's own storage: plain numbers
  gb::Tensor z;
  {
    gb::autograd::SavedTensorHooks hooks(
        [&](const gb::Tensor& t) -> std::any {
          int id = int(store.size());
          store[id] = gbtest::values(t);
          return id;
        },
        [&](const std::any& p) {
          const auto& v = store.at(std::any_cast<int>(p));
          return gb::tensor(gb::ArrayRef<double>(v), gb::TensorOptions().dtype(gb::kDouble));
        });
    gb::Tensor h = x.sin();  // saves x
    // the saved x is not held by the graph: only x itself and our handle reference its impl
    CHECK(x.use_count() == 1 + 1 /* AccumulateGrad's variable */);
    z = h.sum();
  }
  z.backward();
  gbtest::check_values(x.grad(), {std::cos(0.5), std::cos(1.5)}, 1e-12);
}

TEST_CASE("nested guards: the innermost pair is used, the outer one comes back") {
  auto x = gb::tensor({2.0}, f64).requires_grad_(true);
  std::string log;
  auto pack_as = [&](char c) {
    return [&log, c](const gb::Tensor& t) -> std::any {
      log += c;
      return t;
    };
  };
  auto unpack_as = [&](char c) {
    return [&log, c](const std::any& p) {
      log += char(c - 'A' + 'a');
      return std::any_cast<gb::Tensor>(p);
    };
  };
  gb::Tensor a, b, c;
  {
    gb::autograd::SavedTensorHooks outer(pack_as('O'), unpack_as('O'));
    a = x.exp();  // O
    {
      gb::autograd::SavedTensorHooks inner(pack_as('I'), unpack_as('I'));
      b = x.sin();  // I
    }
    c = x.cos();  // O again
  }
  CHECK(log == "OIO");
  (a + b + c).sum().backward();
  // every saved tensor unpacks through the hook that packed it
  std::string unpacked = log.substr(3);
  std::sort(unpacked.begin(), unpacked.end());
  CHECK(unpacked == "ioo");
  CHECK(x.grad().item<double>() == doctest::Approx(std::exp(2.0) + std::cos(2.0) - std::sin(2.0)));
}

TEST_CASE("with hooks the in-place check still fires while the storage lives; errors keep PyTorch's words") {
  auto x = gb::tensor({1.0, 2.0}).requires_grad_(true);
  gb::Tensor h, z;
  {
    gb::autograd::SavedTensorHooks hooks([](const gb::Tensor& t) -> std::any { return t; },
                                         [](const std::any& p) { return std::any_cast<gb::Tensor>(p); });
    h = x * 1.0;
    z = (h * h).sum();  // saves h twice
  }
  {
    gb::NoGradGuard ng;
    h.add_(1.0);
  }
  CHECK_THROWS_WITH_AS(z.backward(), doctest::Contains("modified by an inplace operation"), gb::Error);

  gb::Tensor w;
  {
    gb::autograd::SavedTensorHooks hooks([](const gb::Tensor& t) -> std::any { return t; },
                                         [](const std::any& p) { return std::any_cast<gb::Tensor>(p); });
    w = (x * x).sum();
  }
  w.backward();
  CHECK_THROWS_WITH_AS(w.backward(), doctest::Contains("backward through the graph a second time"), gb::Error);

  gb::Tensor u;
  {
    gb::autograd::SavedTensorHooks hooks([](const gb::Tensor&) -> std::any { return 0; },
                                         [](const std::any&) { return gb::Tensor(); });
    u = x.exp().sum();
  }
  CHECK_THROWS_WITH_AS(u.backward(), doctest::Contains("unpack hook returned an undefined tensor"), gb::Error);
}
