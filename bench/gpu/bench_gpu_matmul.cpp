// bench/gpu/bench_gpu_matmul.cpp — GPU benchmarks whose peer is the machine's own library called directly, in the
// same run: bf16 / f16 / f32 (TF32 off and on) matrix products through gb::mm against cublasGemmEx on the same
// buffers' shapes, and an elementwise add against a device-to-device cudaMemcpy of the same bytes (the memory
// bandwidth bound). Times are medians of CUDA-event-timed rounds after warm-up; JSON lines as bench/bench_common.h.
#include <cublas_v2.h>

#include <cstdio>

#include <glassbox/glassbox.h>

#include "bench_common.h"
#include "gpu/gpu_timing.h"

namespace {

void matmul(const char* name, gb::ScalarType dtype, cudaDataType_t type, cublasComputeType_t compute, int64_t n,
            bool tf32) {
  gb::backends::cuda::matmul::allow_tf32 = tf32;
  const gb::TensorOptions o = gb::TensorOptions().device(gb::kCUDA).dtype(dtype);
  gb::Tensor a = gb::randn({n, n}, o), b = gb::randn({n, n}, o), c = gb::empty({n, n}, o);
  gb::NoGradGuard ng;
  const double ours = bench::median_ms([&] { (void)gb::mm(a, b); }, 10);
  cublasHandle_t h;
  cublasCreate(&h);
  const float alpha = 1, beta = 0;
  const double peer = bench::median_ms(
      [&] {
        cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, int(n), int(n), int(n), &alpha, b.data_ptr(), type, int(n),
                     a.data_ptr(), type, int(n), &beta, c.data_ptr(), type, int(n), compute, CUBLAS_GEMM_DEFAULT);
      },
      10);
  cublasDestroy(h);
  const double tflops = 2.0 * double(n) * double(n) * double(n) / (ours * 1e-3) / 1e12;
  // ratio: the peer's time over ours, so >= 0.95 is the target "95% of cuBLAS"
  bench::emit_vs("gpu_matmul", name, ours, "ms", "cublasGemmEx", peer,
                 "\"tflops\": " + std::to_string(tflops) + ", \"of_cublas\": " + std::to_string(peer / ours));
  gb::backends::cuda::matmul::allow_tf32 = false;
}

void elementwise(int64_t n) {
  gb::Tensor a = gb::randn({n}, gb::kCUDA), b = gb::randn({n}, gb::kCUDA);
  gb::NoGradGuard ng;
  const double ours = bench::median_ms([&] { (void)(a + b); }, 20);
  gb::Tensor dst = gb::empty({2 * n}, gb::kCUDA);
  // the peer moves the same bytes (two reads and a write: 3n floats) as a copy of 1.5n floats read and written
  const double peer = bench::median_ms(
      [&] { CHECK_CUDA(cudaMemcpyAsync(dst.data_ptr(), a.data_ptr(), size_t(n) * 6, cudaMemcpyDeviceToDevice)); }, 20);
  const double gbps = 3.0 * double(n) * 4 / (ours * 1e-3) / 1e9;
  bench::emit_vs("gpu_elementwise", "add_f32_" + std::to_string(n), ours, "ms", "cudaMemcpy_same_bytes", peer,
                 "\"GB_per_s\": " + std::to_string(gbps));
}

}  // namespace

int main() {
  if (!gb::cuda::is_available()) {
    std::printf("{\"bench\": \"gpu_matmul\", \"skipped\": \"%s\"}\n", gb::cuda::unavailable_reason().c_str());
    return 0;
  }
  matmul("bf16_8192", gb::kBFloat16, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 8192, false);
  matmul("f16_8192", gb::kHalf, CUDA_R_16F, CUBLAS_COMPUTE_32F, 8192, false);
  matmul("f32_4096", gb::kFloat, CUDA_R_32F, CUBLAS_COMPUTE_32F, 4096, false);
  matmul("tf32_4096", gb::kFloat, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4096, true);
  elementwise(int64_t(1) << 26);
  return 0;
}
