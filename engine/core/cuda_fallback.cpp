// engine/core/cuda_fallback.cpp — answers for a build without nvcc: no CUDA, zero devices. Every entry that would
// touch a device throws the one error a user can act on (unavailable_reason()); the kernels of cuda/kernels.h can
// never be reached (no cuda tensor can be made) and say so if they were.
#include "glassbox/core/cuda.h"

#ifndef GLASSBOX_WITH_CUDA
#include <ostream>
#include <string>

#include "cuda/cumsum_kernels.h"
#include "cuda/device_error.h"
#include "cuda/index_kernels.h"
#include "cuda/kernels.h"
#include "cuda/loss_kernels.h"
#include "cuda/optim_kernels.h"
#include "cuda/scan_kernels.h"
#include "cuda/softmax_kernels.h"
#include "cuda/sort_kernels.h"
#include "cuda/used_devices.h"
#include "glassbox/core/cuda_stream.h"
#include "glassbox/core/error.h"

namespace gb::cuda {
bool compiled_with_cuda() { return false; }
int64_t device_count() { return 0; }
bool is_available() { return false; }
std::string unavailable_reason() {
  return "this glassbox was built without CUDA (nvcc was not on the PATH when it was configured, or "
         "-DGLASSBOX_CUDA=OFF): install the CUDA toolkit and build again in a fresh folder";
}

namespace {
[[noreturn]] void unavailable(const char* what) {
  throw Error(detail::str_cat(what, ": CUDA is not available: ", unavailable_reason()));
}
}  // namespace

void check_device_index(int64_t index) {
  unavailable((index >= 0 ? "cannot use cuda:" + std::to_string(index) : std::string("cannot use cuda")).c_str());
}
void synchronize(int64_t) { unavailable("gb::cuda::synchronize"); }
int current_device() { unavailable("gb::cuda::current_device"); }
void set_device(int) { unavailable("gb::cuda::set_device"); }
bool CUDAStream::query() const { unavailable("CUDAStream::query"); }
void CUDAStream::synchronize() const { unavailable("CUDAStream::synchronize"); }
std::ostream& operator<<(std::ostream& os, const CUDAStream& s) { return os << "stream " << s.id(); }
CUDAStream getDefaultCUDAStream(int) { unavailable("getDefaultCUDAStream"); }
CUDAStream getCurrentCUDAStream(int) { unavailable("getCurrentCUDAStream"); }
CUDAStream getStreamFromPool(bool, int) { unavailable("getStreamFromPool"); }
void setCurrentCUDAStream(CUDAStream) { unavailable("setCurrentCUDAStream"); }
CUDAStreamGuard::CUDAStreamGuard(CUDAStream s) : original_(s), current_(s) { unavailable("CUDAStreamGuard"); }
CUDAStreamGuard::~CUDAStreamGuard() { (void)original_device_; }
CUDAEvent::~CUDAEvent() = default;
CUDAEvent::CUDAEvent(CUDAEvent&& o) noexcept : event_(o.event_), device_(o.device_), timing_(o.timing_) {}
CUDAEvent& CUDAEvent::operator=(CUDAEvent&& o) noexcept {
  timing_ = o.timing_;
  return *this;
}
void CUDAEvent::record() { unavailable("CUDAEvent::record"); }
void CUDAEvent::record(const CUDAStream&) { unavailable("CUDAEvent::record"); }
void CUDAEvent::block(const CUDAStream&) { unavailable("CUDAEvent::block"); }
bool CUDAEvent::query() const { return true; }  // never recorded
void CUDAEvent::synchronize() const {}
float CUDAEvent::elapsed_time(const CUDAEvent&) const { unavailable("CUDAEvent::elapsed_time"); }
}  // namespace gb::cuda

namespace gb::cuda_kernels {
std::uint64_t used_devices() { return 0; }
void wait_device(int device) { cuda::check_device_index(device); }
void pointwise(const PointwiseLaunch&) { cuda::check_device_index(-1); }
void copy(const CopyLaunch&) { cuda::check_device_index(-1); }
void memcpy(void*, int, const void*, int, size_t, CopyKind, bool) { cuda::check_device_index(-1); }
void reduce_rows(const ReduceLaunch&) { cuda::check_device_index(-1); }
void reduce_columns(const ColumnReduceLaunch&) { cuda::check_device_index(-1); }
void gemm(const GemmLaunch&) { cuda::check_device_index(-1); }
bool gemm_and_bias(const GemmLaunch&, const char*, void*, size_t, GemmEpilogue) {
  cuda::check_device_index(-1);
  return false;
}
size_t lt_workspace_bytes(int) {
  cuda::check_device_index(-1);
  return 0;
}
void max_pool2d_forward(const MaxPoolLaunch&) { cuda::check_device_index(-1); }
void max_pool2d_backward(const MaxPoolLaunch&) { cuda::check_device_index(-1); }
void max_pool2d_gather(const MaxPoolLaunch&) { cuda::check_device_index(-1); }
void window_mean_forward(const WindowMeanLaunch&) { cuda::check_device_index(-1); }
void window_mean_backward(const WindowMeanLaunch&) { cuda::check_device_index(-1); }
void row_norm_forward(const RowNormLaunch&) { cuda::check_device_index(-1); }
void dropout(const DropoutLaunch&) { cuda::check_device_index(-1); }
void non_finite_check_and_unscale(const UnscaleLaunch&) { cuda::check_device_index(-1); }
void adam_update(const AdamLaunch&) { cuda::check_device_index(-1); }
void sgd_update(const SgdLaunch&) { cuda::check_device_index(-1); }
void rmsprop_update(const RmspropLaunch&) { cuda::check_device_index(-1); }
void adagrad_update(const AdagradLaunch&) { cuda::check_device_index(-1); }
void softmax_forward(const SoftmaxLaunch&) { cuda::check_device_index(-1); }
void softmax_backward(const SoftmaxLaunch&) { cuda::check_device_index(-1); }
void index_select_rows(const IndexRowsLaunch&) { cuda::check_device_index(-1); }
void index_add_rows(const IndexRowsLaunch&) { cuda::check_device_index(-1); }
void gather_nd(const GatherLaunch&) { cuda::check_device_index(-1); }
void scatter_add_nd(const GatherLaunch&) { cuda::check_device_index(-1); }
void check_index_range(const IndexRangeLaunch&) { cuda::check_device_index(-1); }
void monitor_scan(const ScanLaunch&) { cuda::check_device_index(-1); }
DeviceError* device_error(int) {
  cuda::check_device_index(-1);
  return nullptr;
}
void raise_device_errors() {}
void set_device_error_record_for_test(int, DeviceError*) {}
size_t cumsum_temp_bytes(const CumsumLaunch&) {
  cuda::check_device_index(-1);
  return 0;
}
void cumsum(const CumsumLaunch&) { cuda::check_device_index(-1); }
size_t segmented_sort_temp_bytes(const SegmentedSortLaunch&) {
  cuda::check_device_index(-1);
  return 0;
}
void segmented_sort(const SegmentedSortLaunch&) { cuda::check_device_index(-1); }
void nll_forward(const NllLaunch&) { cuda::check_device_index(-1); }
void nll_backward(const NllLaunch&) { cuda::check_device_index(-1); }
ScanSlot* scan_slots_alloc(int, int) {
  cuda::check_device_index(-1);
  return nullptr;
}
void scan_slots_free(int, ScanSlot*) noexcept {}
void scan_slots_read(int, ScanSlot*, int, ScanSlot*) { cuda::check_device_index(-1); }
}  // namespace gb::cuda_kernels
#endif
