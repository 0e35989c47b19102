// tests/engine/nn/dropout_test.cpp — Dropout: drop rate and scaling in training, identity in eval, inplace, errors.
#include <doctest/doctest.h>

#include <sstream>

#include "glassbox/glassbox.h"
#include "support/check.h"
#include "support/module_scope.h"

TEST_CASE("Dropout in training zeroes about p of the elements and scales the rest by 1/(1-p)") {
  gb::manual_seed(9);
  gb::nn::Dropout drop(0.3);
  gb::Tensor x = gb::ones({200, 500});
  gb::Tensor y = drop(x);
  auto v = gbtest::values(y);
  int64_t zeros = 0, off_scale = 0;
  for (double e : v) {
    if (e == 0)
      ++zeros;
    else if (std::fabs(e - 1 / 0.7) > 1e-6)
      ++off_scale;
  }
  CHECK(off_scale == 0);  // every kept element is scaled by exactly 1/(1-p)
  CHECK(double(zeros) / double(v.size()) == doctest::Approx(0.3).epsilon(0.02));
  // the gradient passes through the kept elements with the same scale
  gb::Tensor xg = gb::ones({4, 5}).requires_grad_();
  gb::Tensor out = drop(xg);
  out.sum().backward();
  gbtest::check_close(xg.grad(), out.detach(), 1e-6, 1e-6);
}

TEST_CASE("Dropout in eval returns its input; p = 0 and p = 1; inplace; bad p") {
  gb::nn::Dropout drop(gb::nn::DropoutOptions(0.5));
  drop->eval();
  gb::Tensor x = gb::randn({3, 4});
  CHECK(gb::equal(drop(x), x));
  drop->train();
  gb::nn::Dropout none(0.0);
  CHECK(gb::equal(none(x), x));
  gb::nn::Dropout all(1.0);
  CHECK(gb::equal(all(x), gb::zeros({3, 4})));

  gb::manual_seed(1);
  gb::nn::Dropout inplace(gb::nn::DropoutOptions(0.5).inplace(true));
  gb::Tensor z = gb::ones({10, 10});
  gb::Tensor r = inplace(z);
  CHECK(r.data_ptr() == z.data_ptr());
  CHECK(gb::any(z == 0.0).item<bool>());
  CHECK(gb::any(z == 2.0).item<bool>());

  CHECK_THROWS_WITH_AS(gb::nn::Dropout(1.5),
                       doctest::Contains("dropout probability has to be between 0 and 1, but got 1.5"), gb::Error);
  std::ostringstream os;
  drop->pretty_print(os);
  CHECK(os.str() == "Dropout(p=0.5, inplace=false)");
}

TEST_CASE("Dropout's raw forward attributes its allocations to the module") {
  gb::nn::Dropout drop(0.5);
  gb::Tensor x = gb::randn({4, 4});
  CHECK(gbtest::allocation_modules([&] { drop->forward(x); }) == std::set<std::string>{"Dropout"});
}

TEST_CASE("Dropout2d zeroes whole channels of batched and unbatched inputs in training; identity in eval") {
  gb::manual_seed(4);
  gb::nn::Dropout2d drop(0.5);
  gb::Tensor x = gb::ones({8, 16, 3, 3});
  gb::Tensor y = drop(x);
  int64_t dropped = 0;
  for (int64_t n = 0; n < 8; ++n)
    for (int64_t c = 0; c < 16; ++c) {
      double lo = y[n][c].min().item<double>(), hi = y[n][c].max().item<double>();
      CHECK(lo == hi);  // a channel is dropped or kept as a whole
      CHECK((lo == 0 || lo == doctest::Approx(2.0)));
      dropped += lo == 0;
    }
  CHECK(dropped > 32);
  CHECK(dropped < 96);
  gb::Tensor unbatched = drop(gb::ones({16, 3, 3}));
  CHECK(unbatched.sizes() == gb::IntArrayRef({16, 3, 3}));
  CHECK_THROWS_WITH(drop(gb::ones({3, 3})), doctest::Contains("dropout2d: Expected 3D or 4D input, but received a 2D"));
  drop->eval();
  CHECK(gb::equal(drop(x), x));
  std::ostringstream os;
  os << *drop;
  CHECK(os.str() == "Dropout2d(p=0.5, inplace=false)");
  gb::nn::Dropout3d d3(gb::nn::Dropout3dOptions(0.2));
  CHECK(d3(gb::ones({2, 4, 2, 2, 2})).sizes() == gb::IntArrayRef({2, 4, 2, 2, 2}));
  CHECK_THROWS_WITH(gb::nn::Dropout2d(1.5), doctest::Contains("dropout probability has to be between 0 and 1"));
}
