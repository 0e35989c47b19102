// engine/core/device_kernel.h — the one place an op's device-specific half is chosen (internal).
//
// An op entry (engine/ops/<family>.cpp) is written once for every device: it checks its arguments
// (detail::check_device admits cpu, meta and cuda; check_cpu_meta_device refuses cuda for a family with no CUDA
// kernel), computes the output's shape and dtype, makes every tensor it needs (outputs, contiguous copies, dtype
// conversions) and records autograd. Only the part that reads and writes elements differs per device, and the entry
// hands it to one of these:
//
//   run_kernel(out, [&] { cpu loop }, [&] { cuda::softmax_forward(x, out, dim, log); });
//       cpu runs the first, cuda:N the second (a call into engine/cuda/, whose host files hold every family's CUDA
//       half), meta runs nothing: a meta tensor has a shape and an allocation but no memory, so a meta run makes
//       exactly the allocations a cpu run makes and computes nothing (tinygrad's NULL device). A family with no CUDA
//       kernel calls run_cpu_kernel(op, out, [&] { cpu loop }) instead.
//
//   run_op(device, [&] { return cpu_meta_half(); }, [&] { return cuda::fused_half(...); })
//       for the few ops whose CUDA half is a different computation of the whole op (a fused kernel where the cpu
//       composes ops, cuBLAS's bias epilogue): cpu and meta run the first — whose own kernels go through run_kernel,
//       so meta still computes nothing — and cuda:N the second.
//
// Two more places carry the same rule, each once: the ops whose CUDA half is a composition of other ops choose it
// with core/composed.h's composed_path (which the tests also switch on for the cpu); and the CPU loop helpers every
// elementwise and reduction kernel is written on (ops/loops.h's StridedLoop, ops/reduce_kernels.h's run_reduce)
// visit nothing on meta, so a cpu half built on them needs no run_kernel of its own to be meta's half too.
#pragma once

#include <utility>

#include "glassbox/core/tensor.h"
#include "glassbox/ops/factory.h"

namespace gb::detail {

// Throws "<op>: no CUDA kernel in this build yet ..." (engine/cuda/launch.cpp).
[[noreturn]] void throw_no_cuda_kernel(const char* op);

// The kernel half for `out`'s device: cpu() on cpu, cuda() on cuda:N, nothing on meta.
template <typename Cpu, typename Cuda>
void run_kernel(const Tensor& out, Cpu&& cpu, Cuda&& cuda) {
  switch (out.device().type()) {
    case DeviceType::Meta:
      return;
    case DeviceType::CPU:
      std::forward<Cpu>(cpu)();
      return;
    case DeviceType::CUDA:
      std::forward<Cuda>(cuda)();
      return;
  }
}

// A family with only a cpu kernel: cpu() on cpu, nothing on meta, and on cuda the "no CUDA kernel" error naming op
// (the entry's check_cpu_meta_device has refused cuda already; this keeps a forgotten check from doing nothing).
template <typename Cpu>
void run_cpu_kernel(const char* op, const Tensor& out, Cpu&& cpu) {
  run_kernel(out, std::forward<Cpu>(cpu), [op] { throw_no_cuda_kernel(op); });
}

// The half of a whole op for `device`: cpu_meta() on cpu and meta, cuda() on cuda:N.
template <typename CpuMeta, typename Cuda>
auto run_op(Device device, CpuMeta&& cpu_meta, Cuda&& cuda) {
  if (device.type() == DeviceType::CUDA) return std::forward<Cuda>(cuda)();
  return std::forward<CpuMeta>(cpu_meta)();
}

// The tensor whose device runs a copy from src into dst: the cuda end's when one end is on cuda and dst is not on
// meta (the device's copy engine moves bytes between host and device), else dst's (into meta nothing is written).
inline const Tensor& copy_side(const Tensor& dst, const Tensor& src) {
  return dst.device().type() != DeviceType::Meta && src.device().type() == DeviceType::CUDA ? src : dst;
}

// The host's numbers an op computed (indices, a mask, statistics) as a 1-d tensor of dtype on device: made from them
// on the cpu (and copied to cuda:N); on meta allocated only, the one allocation a cpu run makes.
template <typename T>
Tensor values_on(ArrayRef<T> values, ScalarType dtype, Device device) {
  if (device.type() == DeviceType::Meta)
    return empty({int64_t(values.size())}, TensorOptions().dtype(dtype).device(device));
  return tensor(values, TensorOptions().dtype(dtype)).to(device);
}

// True on the devices whose tensors hold values a kernel can read (cpu, cuda); false on meta. For the few places that
// are not a kernel but must not read a meta tensor's memory (an in-place fast path deciding from values, printing).
inline bool has_memory(const Tensor& t) { return t.device().type() != DeviceType::Meta; }

}  // namespace gb::detail
