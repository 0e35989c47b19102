// tests/tools/env_test.cpp — tools/env.cpp: the diagnosis on made-up machines (no driver, a kernel module without
// its library, a driver older than the toolkit, minor-version compatibility, no device, a GPU the build has no code
// for, missing libraries, a CPU-only build, and a healthy H200 that must raise nothing), and the real probe of
// this machine.
#include "tools/env.h"

#include <doctest/doctest.h>

#include <sstream>

using namespace gb::tools;

namespace {

// A machine where everything is right: CUDA 13 toolkit and driver, one H200, every library.
EnvProbe healthy() {
  EnvProbe p;
  p.built_with_cuda = true;
  p.toolkit_version = "13.0.88";
  p.architectures = {80, 90};
  p.driver_found = true;
  p.driver_path = "/usr/lib/x86_64-linux-gnu/libcuda.so.1";
  p.driver_cuda_version = 13000;
  p.kernel_module_version = "580.65.06";
  p.init_result = 0;
  p.gpus = {GpuInfo{0, "NVIDIA H200", 150LL << 30, 9, 0}};
  for (const char* n : {"cudart", "cublas", "cublasLt", "cudnn", "cupti", "nccl"}) {
    CudaLibrary lib;
    lib.name = n;
    lib.soname = std::string("lib") + n + ".so";
    lib.found = true;
    lib.path = "/usr/local/cuda/lib/" + lib.soname;
    lib.version = "1.0.0";
    lib.required = std::string(n) != "nccl";
    p.libraries.push_back(lib);
  }
  return p;
}

CudaLibrary& lib(EnvProbe& p, const std::string& name) {
  for (CudaLibrary& l : p.libraries)
    if (l.name == name) return l;
  FAIL("no library " << name);
  return p.libraries.front();
}

bool has(const std::vector<EnvFinding>& f, EnvFinding::Severity s, const std::string& part) {
  for (const EnvFinding& x : f)
    if (x.severity == s && x.text.find(part) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("a healthy machine: CUDA is available, and nothing else is said") {
  const std::vector<EnvFinding> f = diagnose(healthy());
  REQUIRE(f.size() == 1);
  CHECK(f[0].severity == EnvFinding::kOk);
  CHECK(f[0].text == "CUDA is available: 1 GPU, driver CUDA 13.0, toolkit 13.0.88");
  std::ostringstream out;
  write_env(healthy(), out);
  CHECK(out.str().find("NVIDIA H200, 150.0 GiB, compute capability 9.0, this build has code for it") !=
        std::string::npos);
  CHECK(out.str().find("code for sm_80, sm_90 + PTX compute_90") != std::string::npos);
  CHECK(out.str().find("ok: CUDA is available") != std::string::npos);
}

TEST_CASE("no driver: the toolkit does not bring one; the line says which driver to install") {
  EnvProbe p = healthy();
  p.driver_found = false;
  p.kernel_module_version.clear();
  p.init_result = -1;
  p.gpus.clear();
  const std::vector<EnvFinding> f = diagnose(p);
  REQUIRE_FALSE(f.empty());
  CHECK(f[0].severity == EnvFinding::kError);
  CHECK(f[0].text.rfind("no NVIDIA driver: libcuda.so.1 is not on this machine", 0) == 0);
  CHECK(f[0].text.find("driver 580 or newer for CUDA 13") != std::string::npos);
  CHECK(f.size() == 1);  // the libraries are there: nothing else to say
  std::ostringstream out;
  write_env(p, out);
  CHECK(out.str().find("CUDA is not available: no NVIDIA driver") != std::string::npos);
}

TEST_CASE("a kernel module without its user-space library") {
  EnvProbe p = healthy();
  p.driver_found = false;
  p.init_result = -1;
  p.gpus.clear();
  const std::vector<EnvFinding> f = diagnose(p);
  CHECK(f[0].text.find("kernel module 580.65.06 is loaded but its user-space library libcuda.so.1") !=
        std::string::npos);
}

TEST_CASE("a driver older than the toolkit's major version: the classic nvidia-smi vs nvcc confusion") {
  EnvProbe p = healthy();
  p.driver_cuda_version = 12040;
  p.init_result = 35;  // CUDA_ERROR_INSUFFICIENT_DRIVER would follow; the version says why first
  p.init_error = "CUDA_ERROR_INSUFFICIENT_DRIVER";
  p.gpus.clear();
  const std::vector<EnvFinding> f = diagnose(p);
  CHECK(f[0].severity == EnvFinding::kError);
  CHECK(f[0].text.rfind("the driver supports CUDA 12.4, older than the CUDA 13.0.88 toolkit", 0) == 0);
  CHECK(f[0].text.find("driver 580 or newer") != std::string::npos);
  CHECK(f[0].text.find("nvidia-smi") != std::string::npos);
}

TEST_CASE("same major, older minor: it runs (minor version compatibility), with a warning") {
  EnvProbe p = healthy();
  p.toolkit_version = "13.1.0";
  const std::vector<EnvFinding> f = diagnose(p);
  CHECK(f[0].severity == EnvFinding::kOk);
  CHECK(has(f, EnvFinding::kWarning, "minor version compatibility"));
}

TEST_CASE("a driver that sees no device: CUDA_VISIBLE_DEVICES named when it hides them") {
  EnvProbe p = healthy();
  p.init_result = 100;
  p.init_error = "CUDA_ERROR_NO_DEVICE";
  p.gpus.clear();
  p.visible_devices = "";
  std::vector<EnvFinding> f = diagnose(p);
  CHECK(f[0].text == "the NVIDIA driver sees no GPU (cuInit: CUDA_ERROR_NO_DEVICE): CUDA_VISIBLE_DEVICES='' hides "
                     "every device; unset it");
  p.visible_devices.reset();
  f = diagnose(p);
  CHECK(f[0].text.find("docker run --gpus all") != std::string::npos);
}

TEST_CASE("GPUs the build has no code for: SASS by major and minor, PTX for newer ones") {
  EnvProbe p = healthy();
  p.gpus = {GpuInfo{0, "Tesla T4", 15LL << 30, 7, 5}, GpuInfo{1, "NVIDIA A10", 22LL << 30, 8, 6},
            GpuInfo{2, "NVIDIA L4", 22LL << 30, 8, 9}, GpuInfo{3, "NVIDIA B200", 180LL << 30, 10, 0}};
  const std::vector<EnvFinding> f = diagnose(p);
  REQUIRE(f.size() == 1);  // only the T4 (sm_75): sm_80 runs on 8.6 and 8.9, compute_90 PTX is JIT-compiled on 10.0
  CHECK(f[0].text == "GPU 0 (Tesla T4, sm_75) has no code in this build (sm_80, sm_90 + PTX): rebuild with "
                     "-DCMAKE_CUDA_ARCHITECTURES=\"75;80;90\" (make CMAKE_FLAGS=... in a fresh build folder)");
  std::ostringstream out;
  write_env(p, out);
  CHECK(out.str().find("Tesla T4, 15.0 GiB, compute capability 7.5, NO code for it in this build") != std::string::npos);
  CHECK(out.str().find("NVIDIA B200, 180.0 GiB, compute capability 10.0, this build has code for it") !=
        std::string::npos);
}

TEST_CASE("missing libraries: cuDNN is an error, NCCL only a warning (multi-GPU training needs it)") {
  EnvProbe p = healthy();
  lib(p, "cudnn").found = false;
  lib(p, "cudnn").soname = "libcudnn.so.9";
  lib(p, "nccl").found = false;
  lib(p, "nccl").soname = "libnccl.so.2";
  const std::vector<EnvFinding> f = diagnose(p);
  CHECK(f[0].severity == EnvFinding::kError);
  CHECK(f[0].text.rfind("libcudnn.so.9 not found: install cuDNN 9 for CUDA 13", 0) == 0);
  CHECK(has(f, EnvFinding::kWarning, "libnccl.so.2 not found: install NCCL 2 (only multi-GPU training needs it)"));
  lib(p, "cudnn").found = true;
  CHECK(diagnose(p)[0].severity == EnvFinding::kOk);  // NCCL alone does not make CUDA unavailable
}

TEST_CASE("a build without CUDA says so first, whatever the machine has") {
  EnvProbe p = healthy();
  p.built_with_cuda = false;
  p.toolkit_version.clear();
  p.architectures.clear();
  const std::vector<EnvFinding> f = diagnose(p);
  CHECK(f[0].severity == EnvFinding::kError);
  CHECK(f[0].text.rfind("this glassbox was built without CUDA", 0) == 0);
  std::ostringstream out;
  write_env(p, out);
  CHECK(out.str().find("without CUDA (CPU only)") != std::string::npos);
}

// The threads section: reported, never a finding (glassbox's convolutions run their batch on its own pool, each
// slice on an OpenMP team of one, so libgomp's default spin is no longer a reason to warn).
TEST_CASE("threads: cores, oneDNN's OpenMP team and its wait setting are reported, and raise nothing") {
  EnvProbe p = healthy();
  p.cores = 2;
  p.built_with_onednn = true;
  CHECK(diagnose(p).size() == 1);  // CUDA is available, nothing else said
  std::ostringstream out;
  write_env(p, out);
  CHECK(out.str().find("threads\n  cores         2 (this process's affinity)\n  convolutions  oneDNN") !=
        std::string::npos);
  CHECK(out.str().find("OpenMP wait   libgomp's default spin") != std::string::npos);
  p.gomp_spincount = "10000";
  std::ostringstream set;
  write_env(p, set);
  CHECK(set.str().find("OpenMP wait   GOMP_SPINCOUNT=10000") != std::string::npos);
  p.built_with_onednn = false;
  std::ostringstream none;
  write_env(p, none);
  CHECK(none.str().find("convolutions  glassbox's im2col + GEMM (no oneDNN)") != std::string::npos);
  CHECK(none.str().find("OpenMP wait") == std::string::npos);
}

TEST_CASE("this machine: the probe runs without a GPU, finds the toolkit's libraries when the build has them") {
  const EnvProbe p = probe_env();
  CHECK(p.cores >= 1);
  REQUIRE(p.libraries.size() == 6);
  CHECK(p.libraries[0].name == "cudart");
  const std::vector<EnvFinding> f = diagnose(p);
  REQUIRE_FALSE(f.empty());
  if (!p.driver_found) {  // CI and the development machine: no driver
    CHECK(f[0].severity == EnvFinding::kError);
    CHECK(has(f, EnvFinding::kError, "libcuda.so.1"));  // first, or second after "built without CUDA"
    CHECK(f[0].text.find(p.built_with_cuda ? "libcuda.so.1" : "built without CUDA") != std::string::npos);
    CHECK(p.gpus.empty());
  }
  if (p.built_with_cuda) {
#ifdef GLASSBOX_TEST_CUDA_ARCHS
    // The configured list, e.g. "80,90" (the default) or "90" (CI): each entry's leading digits, in order.
    std::vector<int> configured;
    std::istringstream archs(GLASSBOX_TEST_CUDA_ARCHS);
    for (std::string a; std::getline(archs, a, ',');) configured.push_back(std::stoi(a));
    REQUIRE_FALSE(configured.empty());
    CHECK(p.architectures == configured);
#endif
    CHECK(p.libraries[0].found);  // the build linked cudart from this toolkit: the loader finds it too
    CHECK(p.libraries[0].version == p.toolkit_version.substr(0, p.toolkit_version.find('.', 3)));
  }
  CHECK(cuda_version_text(13000) == "13.0");
  CHECK(cuda_version_text(12040) == "12.4");
}
