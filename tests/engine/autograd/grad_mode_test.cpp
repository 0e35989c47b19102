// tests/engine/autograd/grad_mode_test.cpp — grad mode is per thread and the guards nest and restore.
#include <thread>

#include "support/check.h"

TEST_CASE("guards nest and restore the previous mode") {
  CHECK(gb::GradMode::is_enabled());
  {
    gb::NoGradGuard a;
    CHECK_FALSE(gb::GradMode::is_enabled());
    {
      gb::EnableGradGuard b;
      CHECK(gb::GradMode::is_enabled());
      {
        gb::AutoGradMode c(false);
        CHECK_FALSE(gb::GradMode::is_enabled());
      }
      CHECK(gb::GradMode::is_enabled());
    }
    CHECK_FALSE(gb::GradMode::is_enabled());
  }
  CHECK(gb::GradMode::is_enabled());
}

TEST_CASE("grad mode is thread-local") {
  gb::NoGradGuard ng;
  bool other_thread_enabled = false;
  std::thread t([&] { other_thread_enabled = gb::GradMode::is_enabled(); });
  t.join();
  CHECK(other_thread_enabled);
  CHECK_FALSE(gb::GradMode::is_enabled());
}

TEST_CASE("ops record only when grad mode is on") {
  auto w = gb::ones({2}, gb::requires_grad());
  {
    gb::NoGradGuard ng;
    CHECK((w * 2).grad_fn() == nullptr);
  }
  CHECK((w * 2).grad_fn() != nullptr);
}

TEST_CASE("InferenceMode records nothing in its scope; InferenceMode(false) records again") {
  auto w = gb::ones({2}, gb::requires_grad());
  {
    gb::InferenceMode guard;
    CHECK_FALSE(gb::GradMode::is_enabled());
    CHECK_FALSE((w * 2).requires_grad());
    {
      gb::InferenceMode off(false);
      CHECK((w * 2).requires_grad());
    }
    CHECK_FALSE(gb::GradMode::is_enabled());
  }
  CHECK(gb::GradMode::is_enabled());
  CHECK((w * 2).requires_grad());
}
