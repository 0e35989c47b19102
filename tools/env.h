// tools/env.h — `glassbox env`: what a user checks first when CUDA "is not available".
//
// probe_env() looks at this machine without needing a GPU and without linking CUDA: it dlopen()s the driver
// (libcuda.so.1: its CUDA version, cuInit, each device's name, memory and compute capability), reads the kernel
// module's version (/proc/driver/nvidia/version), and dlopen()s the libraries glassbox's GPU backend uses — cudart,
// cuBLAS, cuBLASLt, cuDNN, CUPTI, NCCL — each with the version it reports and the file it came from (the library
// path first, then the toolkit folder this build was configured with). The build side (the toolkit version nvcc had,
// the architectures compiled) comes from the configure step.
//
// diagnose() turns that into findings, worst first, each one line that names the piece that is missing or too old
// and what to do: no driver (the toolkit does not bring one), a driver older than the toolkit's major version (the
// classic confusion: nvidia-smi's "CUDA Version" is the driver's, nvcc's is the toolkit's), a driver that sees no
// device, a GPU this build has no code for, a missing library, a build without CUDA. It is a pure function of the
// probe, so it is tested on made-up machines.
//
// Threads too, since they decide CPU step times: the cores this process may use and, when the build runs its
// convolutions on oneDNN, the OpenMP wait setting its teams (and any other OpenMP user in the process) follow. Only
// reported: glassbox runs a convolution's batch in slices on its own pool, each on a team of one, so no team of
// several spins beside its workers (docs/PERFORMANCE.md, "Threads"); nothing here is a finding.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace gb::tools {

struct CudaLibrary {
  std::string name;     // "cudart", "cublas", ...
  std::string soname;   // what was looked for: "libcudart.so.13"
  bool found = false;
  std::string path;     // the file the loader found
  std::string version;  // as the library reports it ("13.0.48"); empty when it has no version call
  bool required = true; // the GPU backend needs it (NCCL: only distributed training)
};

struct GpuInfo {
  int index = 0;
  std::string name;
  std::int64_t memory_bytes = 0;
  int cc_major = 0, cc_minor = 0;
};

struct EnvProbe {
  // the build
  bool built_with_cuda = false;
  std::string toolkit_version;    // "13.0.48" (nvcc's, at configure time); empty without CUDA
  std::vector<int> architectures; // compiled SASS, e.g. {80, 90}; PTX of the highest is embedded too
  // the driver
  bool driver_found = false;           // libcuda.so.1 loads
  std::string driver_path;
  int driver_cuda_version = 0;         // cuDriverGetVersion: 13000 = CUDA 13.0
  std::string kernel_module_version;   // "580.65.06" from /proc/driver/nvidia/version; empty when absent
  int init_result = -1;                // cuInit(0): 0 success, 100 no device, ...; -1 not called
  std::string init_error;              // its name ("CUDA_ERROR_NO_DEVICE")
  std::vector<GpuInfo> gpus;
  std::optional<std::string> visible_devices;  // CUDA_VISIBLE_DEVICES
  // the libraries
  std::vector<CudaLibrary> libraries;
  // threads
  int cores = 0;                               // CPUs this process may run on (its affinity mask)
  bool built_with_onednn = false;              // convolutions on oneDNN, whose threads are an OpenMP (libgomp) team
  std::optional<std::string> omp_wait_policy;  // OMP_WAIT_POLICY
  std::optional<std::string> gomp_spincount;   // GOMP_SPINCOUNT
};

// This machine and this build.
EnvProbe probe_env();

struct EnvFinding {
  enum Severity { kError, kWarning, kOk } severity = kOk;
  std::string text;
};

// Worst first; the first is the one line to read. CUDA is available when the first is kOk.
std::vector<EnvFinding> diagnose(const EnvProbe& p);

// The whole report: build, driver, libraries, GPUs, then the findings.
void write_env(const EnvProbe& p, std::ostream& out);

// "13.0" from 13000.
std::string cuda_version_text(int v);

}  // namespace gb::tools
