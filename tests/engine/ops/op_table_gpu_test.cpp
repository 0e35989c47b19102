// tests/engine/ops/op_table_gpu_test.cpp — GPU tier: the op table's cases (tests/support/op_cases.cpp) on cuda
// against the cpu. Every case whose rows all run on cuda (glassbox/ops/op_table.def), in every dtype it takes: the
// same inputs on both devices, the outputs close (the integer dtypes exact), then the same weighting of the output
// backpropagated and every input's gradient close; random cases compare shapes and dtypes. A new op's case runs
// here by being in the table. Without a usable device the executable skips with the reason (support/gpu_main.cpp).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <glassbox/glassbox.h>

#include "glassbox/core/cudnn.h"
#include "glassbox/ops/op_table.h"
#include "support/check.h"
#include "support/op_cases.h"

namespace op_table_gpu_test {

namespace oc = gbtest::op_cases;
using gbtest::kGpu;

// cuda against cpu: the same formulas summed in other orders (cuBLAS, cuDNN, the block reductions).
std::pair<double, double> tolerance(gb::ScalarType dt) {
  switch (dt) {
    case gb::kFloat64: return {1e-9, 1e-11};
    case gb::kFloat32: return {2e-4, 2e-5};
    case gb::kFloat16: return {1e-2, 1e-2};
    case gb::kBFloat16: return {5e-2, 5e-2};
    default: return {0, 0};  // integer dtypes: exact
  }
}

void same_layout(const gb::Tensor& cuda, const gb::Tensor& cpu, const std::string& what) {
  INFO(what);
  REQUIRE(cuda.defined() == cpu.defined());
  if (!cpu.defined()) return;
  CHECK(cuda.sizes() == cpu.sizes());
  CHECK(std::string(gb::python_name(cuda.scalar_type())) == gb::python_name(cpu.scalar_type()));
}

void run(const oc::Case& c, gb::ScalarType dt) {
  const auto [rtol, atol] = tolerance(dt);
  const bool half = dt == gb::kFloat16 || dt == gb::kBFloat16;
  std::vector<gb::Tensor> cpu_in = oc::make_inputs(c, dt);
  std::vector<gb::Tensor> cuda_in = oc::inputs_on(cpu_in, kGpu);
  gb::Tensor cpu = c.run(cpu_in), cuda = c.run(cuda_in);
  same_layout(cuda, cpu, "output");
  if (!c.random) gbtest::check_close(cuda, cpu, rtol, atol);
  if (!c.backward || half || !cpu.is_floating_point() || !cpu.requires_grad()) return;
  gb::Tensor w = gb::randn(cpu.sizes(), gb::kFloat64).to(cpu.scalar_type());
  (cpu * w).sum().backward();
  (cuda * w.to(kGpu)).sum().backward();
  for (size_t k = 0; k < cpu_in.size(); ++k) {
    if (!cpu_in[k].requires_grad()) continue;
    const std::string what = "gradient of input " + std::to_string(k);
    same_layout(cuda_in[k].grad(), cpu_in[k].grad(), what);
    if (!c.random && cpu_in[k].grad().defined()) {
      INFO(what);
      gbtest::check_close(cuda_in[k].grad(), cpu_in[k].grad(), rtol, atol);
    }
  }
}

TEST_CASE("every case of the op table that runs on cuda gives the cpu's results there, forward and backward") {
  const bool tf32 = gb::backends::cudnn::allow_tf32.exchange(false);  // float32 convolutions in float32
  int runs = 0;
  for (const oc::Case& c : oc::cases()) {
    if (!(oc::devices_of(c) & gb::ops::kOnCuda)) continue;
    for (gb::ScalarType dt : oc::dtypes_of(c.dtypes)) {
      INFO("case \"" << c.name << "\" in " << std::string(gb::python_name(dt)));
      try {
        run(c, dt);
        ++runs;
      } catch (const std::exception& e) {
        FAIL_CHECK("threw: " << std::string(e.what()));
      }
    }
  }
  gb::backends::cudnn::allow_tf32 = tf32;
  CHECK(runs > 500);
}

}  // namespace op_table_gpu_test
