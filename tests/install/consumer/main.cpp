// Uses the installed headers and library: a tiny forward and backward, checked.
#include <glassbox/glassbox.h>

#include <cstdio>

int main() {
  auto x = gb::tensor({1.0, 2.0, 3.0}, gb::requires_grad());
  (x * x).sum().backward();
  bool ok = gb::allclose(x.grad(), gb::tensor({2.0, 4.0, 6.0}));
  std::printf("glassbox %s via find_package: %s\n", gb::version(), ok ? "ok" : "WRONG GRADIENT");
  return ok ? 0 : 1;
}
