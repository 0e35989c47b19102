// tools/env.cpp — `glassbox env` (contract in env.h): the driver and the CUDA libraries through dlopen, then the
// one line that says what is missing.
#include "tools/env.h"

#include <dlfcn.h>
#include <link.h>
#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#ifndef GLASSBOX_BUILD_CUDA_VERSION
#define GLASSBOX_BUILD_CUDA_VERSION ""  // a build without nvcc
#endif
#ifndef GLASSBOX_BUILD_CUDA_ARCHS
#define GLASSBOX_BUILD_CUDA_ARCHS ""
#endif
#ifndef GLASSBOX_CUDA_LIBDIR
#define GLASSBOX_CUDA_LIBDIR ""
#endif
#ifndef GLASSBOX_BUILD_ONEDNN
#define GLASSBOX_BUILD_ONEDNN 0
#endif

namespace gb::tools {

namespace {

// The driver's CUDA API, declared here so that glassbox needs no CUDA header or library to ask.
using CuIntFn = int (*)(int*);
using CuInitFn = int (*)(unsigned);
using CuDeviceGetFn = int (*)(int*, int);
using CuDeviceGetNameFn = int (*)(char*, int, int);
using CuDeviceTotalMemFn = int (*)(std::size_t*, int);
using CuDeviceGetAttributeFn = int (*)(int*, int, int);
using CuGetErrorNameFn = int (*)(int, const char**);
constexpr int kComputeCapabilityMajor = 75, kComputeCapabilityMinor = 76;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_*

std::string library_path(void* handle) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name) return map->l_name;
  return {};
}

// dlopen by soname (the library path, ld.so.cache), then from the toolkit folder the build was configured with.
void* open_library(const std::string& soname) {
  if (void* h = dlopen(soname.c_str(), RTLD_LAZY | RTLD_LOCAL)) return h;
  const std::string dir = GLASSBOX_CUDA_LIBDIR;
  if (!dir.empty())
    if (void* h = dlopen((dir + "/" + soname).c_str(), RTLD_LAZY | RTLD_LOCAL)) return h;
  return nullptr;
}

template <class F>
F symbol(void* handle, const char* name) {
  return handle ? reinterpret_cast<F>(dlsym(handle, name)) : nullptr;
}

std::string dotted(long long code, long long major_div, long long minor_div) {
  return std::to_string(code / major_div) + "." + std::to_string(code % major_div / minor_div) + "." +
         std::to_string(code % minor_div);
}

int toolkit_major(const std::string& version) { return version.empty() ? 0 : std::atoi(version.c_str()); }

std::vector<int> parse_archs(const std::string& text) {
  std::vector<int> out;
  std::string list = text;
  std::replace(list.begin(), list.end(), ';', ',');
  std::stringstream s(list);
  for (std::string item; std::getline(s, item, ',');) {
    const int a = std::atoi(item.c_str());  // "90-real" / "90-virtual" read as 90
    if (a > 0 && std::find(out.begin(), out.end(), a) == out.end()) out.push_back(a);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The libraries the GPU backend loads, with each one's own version call.
CudaLibrary probe_library(const std::string& name, const std::string& soname, bool required) {
  CudaLibrary lib;
  lib.name = name;
  lib.soname = soname;
  lib.required = required;
  void* h = open_library(soname);
  if (!h) return lib;
  lib.found = true;
  lib.path = library_path(h);
  if (name == "cudart") {
    if (auto f = symbol<CuIntFn>(h, "cudaRuntimeGetVersion"); f) {
      int v = 0;
      if (f(&v) == 0) lib.version = cuda_version_text(v);
    }
  } else if (name == "cublas") {
    if (auto f = symbol<int (*)(int, int*)>(h, "cublasGetProperty"); f) {
      int ma = 0, mi = 0, pa = 0;  // libraryPropertyType: MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL
      if (f(0, &ma) == 0 && f(1, &mi) == 0 && f(2, &pa) == 0)
        lib.version = std::to_string(ma) + "." + std::to_string(mi) + "." + std::to_string(pa);
    }
  } else if (name == "cublasLt") {
    if (auto f = symbol<std::size_t (*)()>(h, "cublasLtGetVersion"); f)
      lib.version = dotted(static_cast<long long>(f()), 10000, 100);
  } else if (name == "cudnn") {
    if (auto f = symbol<std::size_t (*)()>(h, "cudnnGetVersion"); f)  // cuDNN 9: major*10000 + minor*100 + patch
      lib.version = dotted(static_cast<long long>(f()), 10000, 100);
  } else if (name == "cupti") {
    if (auto f = symbol<int (*)(unsigned*)>(h, "cuptiGetVersion"); f) {
      unsigned v = 0;
      if (f(&v) == 0) lib.version = "API " + std::to_string(v);
    }
  } else if (name == "nccl") {
    if (auto f = symbol<CuIntFn>(h, "ncclGetVersion"); f) {
      int v = 0;  // NCCL >= 2.9: major*10000 + minor*100 + patch
      if (f(&v) == 0) lib.version = dotted(v, 10000, 100);
    }
  }
  return lib;  // handles stay open: the process ends soon, and unloading CUDA libraries is not always safe
}

// The oldest Linux driver branch that runs each CUDA major version (NVIDIA's CUDA toolkit release notes).
const char* minimum_driver(int cuda_major) {
  switch (cuda_major) {
    case 13: return "580";
    case 12: return "525";
    case 11: return "450";
    default: return nullptr;
  }
}

std::string driver_advice(int cuda_major) {
  const char* d = minimum_driver(cuda_major);
  return d ? std::string("driver ") + d + " or newer for CUDA " + std::to_string(cuda_major)
           : "a driver for CUDA " + std::to_string(cuda_major);
}

std::string arch_text(int a) { return "sm_" + std::to_string(a); }

// A device runs this build's code when a compiled SASS has its major version and no higher minor (sm_80 runs on
// 8.6 and 8.9), or when the embedded PTX of the highest architecture can be JIT-compiled for it (cc >= that).
bool has_code_for(const std::vector<int>& archs, int major, int minor) {
  if (archs.empty()) return false;
  for (int a : archs)
    if (a / 10 == major && a % 10 <= minor) return true;
  return major * 10 + minor >= archs.back();
}

std::string gib(std::int64_t b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(b) / double(1LL << 30));
  return buf;
}

}  // namespace

std::string cuda_version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

EnvProbe probe_env() {
  EnvProbe p;
  p.toolkit_version = GLASSBOX_BUILD_CUDA_VERSION;
  p.built_with_cuda = !p.toolkit_version.empty();
  p.architectures = parse_archs(GLASSBOX_BUILD_CUDA_ARCHS);
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES")) p.visible_devices = v;
  cpu_set_t cpus;
  p.cores = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 0;
  p.built_with_onednn = GLASSBOX_BUILD_ONEDNN != 0;
  if (const char* v = std::getenv("OMP_WAIT_POLICY")) p.omp_wait_policy = v;
  if (const char* v = std::getenv("GOMP_SPINCOUNT")) p.gomp_spincount = v;

  std::ifstream module("/proc/driver/nvidia/version");
  for (std::string line; std::getline(module, line);)
    if (auto at = line.find("Kernel Module"); at != std::string::npos) {
      std::istringstream words(line.substr(at + 13));
      words >> p.kernel_module_version;  // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  ..."
      break;
    }

  if (void* cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL)) {
    p.driver_found = true;
    p.driver_path = library_path(cuda);
    if (auto f = symbol<CuIntFn>(cuda, "cuDriverGetVersion"); f) f(&p.driver_cuda_version);
    if (auto init = symbol<CuInitFn>(cuda, "cuInit"); init) {
      p.init_result = init(0);
      if (p.init_result != 0)
        if (auto name = symbol<CuGetErrorNameFn>(cuda, "cuGetErrorName"); name) {
          const char* s = nullptr;
          if (name(p.init_result, &s) == 0 && s) p.init_error = s;
        }
    }
    auto count = symbol<CuIntFn>(cuda, "cuDeviceGetCount");
    auto get = symbol<CuDeviceGetFn>(cuda, "cuDeviceGet");
    auto name = symbol<CuDeviceGetNameFn>(cuda, "cuDeviceGetName");
    auto mem = symbol<CuDeviceTotalMemFn>(cuda, "cuDeviceTotalMem_v2");
    auto attr = symbol<CuDeviceGetAttributeFn>(cuda, "cuDeviceGetAttribute");
    int n = 0;
    if (p.init_result == 0 && count && get && count(&n) == 0)
      for (int i = 0; i < n; ++i) {
        GpuInfo g;
        g.index = i;
        int dev = 0;
        if (get(&dev, i) != 0) continue;
        char buf[256] = {};
        if (name && name(buf, sizeof buf - 1, dev) == 0) g.name = buf;
        std::size_t bytes = 0;
        if (mem && mem(&bytes, dev) == 0) g.memory_bytes = static_cast<std::int64_t>(bytes);
        if (attr) {
          attr(&g.cc_major, kComputeCapabilityMajor, dev);
          attr(&g.cc_minor, kComputeCapabilityMinor, dev);
        }
        p.gpus.push_back(g);
      }
  }

  const int major = toolkit_major(p.toolkit_version) > 0 ? toolkit_major(p.toolkit_version) : 13;
  const std::string m = std::to_string(major);
  p.libraries = {probe_library("cudart", "libcudart.so." + m, true),
                 probe_library("cublas", "libcublas.so." + m, true),
                 probe_library("cublasLt", "libcublasLt.so." + m, true),
                 probe_library("cudnn", "libcudnn.so.9", true),
                 probe_library("cupti", "libcupti.so." + m, true),
                 probe_library("nccl", "libnccl.so.2", false)};
  return p;
}

std::vector<EnvFinding> diagnose(const EnvProbe& p) {
  std::vector<EnvFinding> out;
  auto error = [&](std::string t) { out.push_back({EnvFinding::kError, std::move(t)}); };
  auto warning = [&](std::string t) { out.push_back({EnvFinding::kWarning, std::move(t)}); };
  const int tk_major = toolkit_major(p.toolkit_version);
  const int drv_major = p.driver_cuda_version / 1000, drv_minor = p.driver_cuda_version % 1000 / 10;

  if (!p.built_with_cuda)
    error("this glassbox was built without CUDA (nvcc was not on the PATH when it was configured): install the CUDA "
          "toolkit, put nvcc on the PATH, and build again in a fresh folder (rm -rf build && make)");

  if (!p.driver_found) {
    const std::string need = driver_advice(tk_major > 0 ? tk_major : 13);
    if (!p.kernel_module_version.empty())
      error("the NVIDIA kernel module " + p.kernel_module_version +
            " is loaded but its user-space library libcuda.so.1 is not on the library path: install the driver's "
            "libraries of the same version, or add their folder to LD_LIBRARY_PATH");
    else
      error("no NVIDIA driver: libcuda.so.1 is not on this machine. The CUDA toolkit does not include the driver; "
            "install the NVIDIA driver (" + need +
            "), and in a container pass the host's GPUs and driver (docker run --gpus all)");
  } else if (p.driver_cuda_version > 0 && tk_major > 0 && drv_major < tk_major) {
    error("the driver supports CUDA " + cuda_version_text(p.driver_cuda_version) + ", older than the CUDA " +
          p.toolkit_version + " toolkit this glassbox was built with: update the NVIDIA driver (" +
          driver_advice(tk_major) + "). nvidia-smi's \"CUDA Version\" is the newest CUDA the driver runs; nvcc "
          "--version is the toolkit's, and the driver's major version must be at least the toolkit's");
  } else if (p.init_result != 0 && p.init_result != -1) {
    const std::string why = (p.init_error.empty() ? "error " + std::to_string(p.init_result) : p.init_error);
    if (p.init_result == 100)  // CUDA_ERROR_NO_DEVICE
      error("the NVIDIA driver sees no GPU (cuInit: " + why + ")" +
            (p.visible_devices ? ": CUDA_VISIBLE_DEVICES='" + *p.visible_devices + "' hides every device; unset it"
                               : ": check nvidia-smi; in a container pass the GPUs (docker run --gpus all)"));
    else
      error("the NVIDIA driver failed to start (cuInit: " + why +
            "): check nvidia-smi and the kernel log (dmesg); a driver updated without a reboot needs one");
  } else if (p.driver_cuda_version > 0 && tk_major > 0 && drv_major == tk_major) {
    const int tk_minor = std::atoi(p.toolkit_version.c_str() + p.toolkit_version.find('.') + 1);
    if (drv_minor < tk_minor)
      warning("the driver's CUDA " + cuda_version_text(p.driver_cuda_version) + " is older than the toolkit's " +
              p.toolkit_version + ": it runs (minor version compatibility), but PTX from the newer toolkit cannot "
              "be JIT-compiled: update the driver if a GPU needs the PTX");
  }

  if (p.built_with_cuda && p.init_result == 0) {
    std::string built;
    for (int a : p.architectures) built += (built.empty() ? "" : ", ") + arch_text(a);
    for (const GpuInfo& g : p.gpus) {
      if (has_code_for(p.architectures, g.cc_major, g.cc_minor)) continue;
      const std::string cc = std::to_string(g.cc_major) + std::to_string(g.cc_minor);
      error("GPU " + std::to_string(g.index) + " (" + g.name + ", sm_" + cc + ") has no code in this build (" + built +
            " + PTX): rebuild with -DCMAKE_CUDA_ARCHITECTURES=\"" + cc + ";80;90\" (make CMAKE_FLAGS=... in a "
            "fresh build folder)");
    }
    if (p.gpus.empty() && out.empty()) error("the driver started but reports no GPU: check nvidia-smi");
  }

  for (const CudaLibrary& lib : p.libraries) {
    if (lib.found) continue;
    std::string how = lib.name == "cudnn"  ? "install cuDNN 9 for CUDA " + std::to_string(tk_major > 0 ? tk_major : 13)
                      : lib.name == "nccl" ? "install NCCL 2 (only multi-GPU training needs it)"
                                           : "install the CUDA " + (p.toolkit_version.empty() ? std::string("13")
                                                                                              : p.toolkit_version) +
                                                 " runtime libraries";
    std::string text = lib.soname + " not found: " + how + ", or add its folder to LD_LIBRARY_PATH";
    if (lib.required && p.built_with_cuda) error(text);
    else warning(text);
  }

  std::stable_sort(out.begin(), out.end(),
                   [](const EnvFinding& a, const EnvFinding& b) { return a.severity < b.severity; });
  if (out.empty() || out.front().severity != EnvFinding::kError) {
    std::string ok = "CUDA is available: " + std::to_string(p.gpus.size()) + " GPU" + (p.gpus.size() == 1 ? "" : "s") +
                     ", driver CUDA " + cuda_version_text(p.driver_cuda_version) + ", toolkit " + p.toolkit_version;
    out.insert(out.begin(), {EnvFinding::kOk, ok});
  }
  return out;
}

void write_env(const EnvProbe& p, std::ostream& out) {
  out << "build\n";
  if (p.built_with_cuda) {
    out << "  CUDA toolkit " << p.toolkit_version << " (nvcc at configure time), code for ";
    for (size_t i = 0; i < p.architectures.size(); ++i) out << (i ? ", " : "") << arch_text(p.architectures[i]);
    if (!p.architectures.empty()) out << " + PTX compute_" << p.architectures.back();
    out << "\n";
  } else {
    out << "  without CUDA (CPU only)\n";
  }
  out << "driver\n";
  if (p.driver_found) {
    out << "  libcuda.so.1  " << p.driver_path << "\n  supports CUDA "
        << (p.driver_cuda_version ? cuda_version_text(p.driver_cuda_version) : std::string("?")) << "\n";
    out << "  cuInit        " << (p.init_result == 0 ? std::string("ok") : p.init_error.empty() ? std::to_string(p.init_result) : p.init_error) << "\n";
  } else {
    out << "  libcuda.so.1  not found\n";
  }
  out << "  kernel module " << (p.kernel_module_version.empty() ? "not loaded (/proc/driver/nvidia/version absent)"
                                                               : p.kernel_module_version)
      << "\n";
  out << "libraries (as this process finds them)\n";
  for (const CudaLibrary& lib : p.libraries) {
    char name[16];
    std::snprintf(name, sizeof name, "%-9s", lib.name.c_str());
    out << "  " << name << " ";
    if (lib.found) out << (lib.version.empty() ? "?" : lib.version) << "  " << lib.path << "\n";
    else out << "not found (" << lib.soname << ")\n";
  }
  out << "  nvtx      NVTX3, header-only: compiled in, nothing to load\n";
  out << "GPUs\n";
  if (p.gpus.empty()) out << "  none visible\n";
  for (const GpuInfo& g : p.gpus) {
    out << "  " << g.index << "  " << g.name << ", " << gib(g.memory_bytes) << ", compute capability " << g.cc_major
        << "." << g.cc_minor << ", "
        << (has_code_for(p.architectures, g.cc_major, g.cc_minor) ? "this build has code for it"
                                                                   : "NO code for it in this build")
        << "\n";
  }
  out << "  CUDA_VISIBLE_DEVICES " << (p.visible_devices ? "'" + *p.visible_devices + "'" : std::string("(unset)"))
      << "\n";
  out << "threads\n  cores         " << p.cores << " (this process's affinity)\n  convolutions  "
      << (p.built_with_onednn ? "oneDNN, on an OpenMP (libgomp) team" : "glassbox's im2col + GEMM (no oneDNN)") << "\n";
  if (p.built_with_onednn)
    out << "  OpenMP wait   "
        << (p.omp_wait_policy ? "OMP_WAIT_POLICY=" + *p.omp_wait_policy
            : p.gomp_spincount ? "GOMP_SPINCOUNT=" + *p.gomp_spincount
                               : std::string("libgomp's default spin (GOMP_SPINCOUNT and OMP_WAIT_POLICY unset)"))
        << "\n";
  out << "\n";
  const std::vector<EnvFinding> findings = diagnose(p);
  for (size_t i = 0; i < findings.size(); ++i) {
    const EnvFinding& f = findings[i];
    const char* tag = f.severity == EnvFinding::kError ? "error" : f.severity == EnvFinding::kWarning ? "warning" : "ok";
    if (i == 0 && f.severity == EnvFinding::kError) out << "CUDA is not available: " << f.text << "\n";
    else out << tag << ": " << f.text << "\n";
  }
}

}  // namespace gb::tools
