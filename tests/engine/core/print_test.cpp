// tests/engine/core/print_test.cpp — operator<< prints exactly what PyTorch's repr prints (expected strings taken
// from PyTorch 1.13's torch/_tensor_str.py output, with "torch." written "gb.").
#include <iostream>
#include <sstream>

#include "support/check.h"

namespace {
std::string str(const gb::Tensor& t) {
  std::ostringstream os;
  os << t;
  return os.str();
}
}  // namespace

TEST_CASE("fixed, integer and scientific modes") {
  CHECK(str(gb::tensor({1.0, 2.5, -3.0})) == "tensor([ 1.0000,  2.5000, -3.0000])");
  CHECK(str(gb::tensor({1.0, 2.0, 3.0})) == "tensor([1., 2., 3.])");
  CHECK(str(gb::tensor({1e-5, 1.0})) == "tensor([1.0000e-05, 1.0000e+00])");
  CHECK(str(gb::tensor({0.0, 0.0})) == "tensor([0., 0.])");
  CHECK(str(gb::tensor(3.14159)) == "tensor(3.1416)");
  CHECK(str(gb::tensor({1, 2, 30})) == "tensor([ 1,  2, 30])");
  CHECK(str(gb::tensor(std::vector<bool>{true, false})) == "tensor([ True, False])");
  // bytes print as numbers, not characters (torch.tensor([0, 65, 255], dtype=torch.uint8))
  CHECK(str(gb::tensor({0, 65, 255}).to(gb::kUInt8)) == "tensor([  0,  65, 255], dtype=gb.uint8)");
  CHECK(str(gb::tensor({-128, 7}).to(gb::kInt8)) == "tensor([-128,    7], dtype=gb.int8)");
}

TEST_CASE("print() writes libtorch's one-line summary to stdout") {
  std::ostringstream captured;
  std::streambuf* old = std::cout.rdbuf(captured.rdbuf());
  gb::zeros({2, 3}).print();
  gb::ones({4}, gb::kLong).print();
  gb::Tensor().print();
  std::cout.rdbuf(old);
  CHECK(captured.str() == "[CPUFloatType [2, 3]]\n[CPULongType [4]]\n[UndefinedTensorImpl]\n");
}

TEST_CASE("matrices, 3-D blocks and suffixes") {
  auto m = gb::tensor({{1.0, -0.5}, {3.25, 0.0}}, gb::kFloat64);
  CHECK(str(m) == "tensor([[ 1.0000, -0.5000],\n        [ 3.2500,  0.0000]], dtype=gb.float64)");
  auto c = gb::arange(8).view({2, 2, 2});
  CHECK(str(c) == "tensor([[[0, 1],\n         [2, 3]],\n\n        [[4, 5],\n         [6, 7]]])");
  auto r = gb::ones({2}, gb::requires_grad());
  CHECK(str(r) == "tensor([1., 1.], requires_grad=True)");
  CHECK(str(r * 2) == "tensor([2., 2.], grad_fn=<MulBackward1>)");
  CHECK(str(gb::zeros({0, 3})) == "tensor([], size=(0, 3))");
  CHECK(str(gb::ones({2}, gb::kHalf)) == "tensor([1., 1.], dtype=gb.float16)");
  CHECK(str(gb::tensor({1.0, NAN, INFINITY})) == "tensor([1., nan, inf])");
}

TEST_CASE("long tensors are summarized and long rows wrap at 80 columns") {
  auto big = gb::arange(2000);
  CHECK(str(big) == "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])");
  auto row = gb::arange(30).to(gb::kFloat) / 7;
  std::string s = str(row);
  CHECK(s.find('\n') != std::string::npos);
  std::istringstream lines(s);
  for (std::string line; std::getline(lines, line);) CHECK(line.size() <= 80);
}
