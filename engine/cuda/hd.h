// engine/cuda/hd.h — GB_HD marks a function both host and device code may call (internal). nvcc sees
// __host__ __device__; g++ sees nothing, so the same arithmetic and indexing is compiled and unit-tested on the CPU
// (tests/engine/cuda/pointwise_ops_test.cpp, offset_calc_test.cpp) and run in the kernels.
#pragma once

#ifdef __CUDACC__
#define GB_HD __host__ __device__ __forceinline__
#else
#define GB_HD inline
#endif
