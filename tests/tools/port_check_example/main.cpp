// tests/tools/port_check_example/main.cpp — a libtorch program using what glassbox lacks: the example of
// `tools/port.sh --check` that docs/PORTING.md quotes (docs.outputs reruns it). Never built.
#include <torch/torch.h>
int main() {
  auto a = torch::ones({2, 2});
  auto b = torch::searchsorted(a, a);
  auto c = torch::searchsorted(a, a, /*out_int32=*/true);
  auto d = torch::kron(a, a);
  return d.size(0) == 2 && c.size(0) == 2 ? 0 : 1;
}
