// glassbox/data/pin_memory.h — page-locked host copies of tensors (Tensor.pin_memory() in PyTorch).
//
// pin_memory(t) copies t into a new contiguous buffer that the GPU can read by DMA: cudaHostAlloc when glassbox
// is built with CUDA and a device is present, plain 64-byte aligned host memory otherwise (a CPU-only run pays
// the copy, so the trace's pin stage shows what pinning would cost). is_pinned(t) says whether t's storage came
// from pin_memory.
#pragma once

#include "glassbox/core/tensor.h"

namespace gb::data {

Tensor pin_memory(const Tensor& t);
bool is_pinned(const Tensor& t);
// True when pin_memory() gets page-locked memory from CUDA (else plain host memory).
bool pinned_memory_is_page_locked();

}  // namespace gb::data
