// tests/engine/core/error_test.cpp — the error tiers: GB_CHECK builds the message from its parts and throws the
// right class; the classes nest like PyTorch's (IndexError and TypeError are Errors are std::runtime_errors).
#include "support/check.h"

TEST_CASE("GB_CHECK streams its parts into the message and only throws when the condition fails") {
  int64_t n = 3;
  CHECK_NOTHROW(GB_CHECK(n == 3, "never"));
  try {
    GB_CHECK(n == 4, "op: expected ", 4, " got ", n, " for shape ", gb::IntArrayRef({2, 3}));
    FAIL("expected a throw");
  } catch (const gb::Error& e) {
    CHECK(std::string(e.what()) == "op: expected 4 got 3 for shape [2, 3]");
  }
  CHECK_THROWS_AS(GB_CHECK_INDEX(false, "i"), gb::IndexError);
  CHECK_THROWS_AS(GB_CHECK_TYPE(false, "t"), gb::TypeError);
}

TEST_CASE("exception classes nest") {
  CHECK_THROWS_AS(throw gb::IndexError("x"), gb::Error);
  CHECK_THROWS_AS(throw gb::TypeError("x"), gb::Error);
  CHECK_THROWS_AS(throw gb::Error("x"), std::runtime_error);
  // a real user error surfaces as the most specific class
  CHECK_THROWS_AS(gb::ones({2}).select(0, 5), gb::IndexError);
}
