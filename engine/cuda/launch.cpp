// engine/cuda/launch.cpp — tensors into the launch records of cuda/kernels.h (see cuda/launch.h).
#include "cuda/launch.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "core/make.h"
#include "glassbox/core/cuda.h"
#include "glassbox/data/pin_memory.h"
#include "glassbox/ops/factory.h"
#include "glassbox/ops/shape.h"
#include "ops/inplace.h"

namespace gb::detail {
namespace ck = cuda_kernels;

namespace {

// t's byte strides seen from out's shape: leading dims t lacks and dims it broadcasts get stride 0.
std::vector<int64_t> broadcast_byte_strides(const Tensor& t, IntArrayRef shape) {
  const int64_t nd = int64_t(shape.size()), td = t.dim();
  std::vector<int64_t> s(size_t(nd), 0);
  for (int64_t d = 0; d < td; ++d) {
    const int64_t od = nd - td + d;
    s[size_t(od)] = t.size(d) == 1 && shape[size_t(od)] != 1 ? 0 : t.stride(d) * t.element_size();
  }
  return s;
}

// The offset calculator of out and its inputs; operands that would leave more than kMaxDims dims are made
// contiguous first (they are then simple to index).
ck::OffsetCalc offset_calc(const Tensor& out, std::vector<Tensor>& ins) {
  std::vector<std::vector<int64_t>> strides;
  strides.push_back(broadcast_byte_strides(out, out.sizes()));
  for (const Tensor& t : ins) strides.push_back(broadcast_byte_strides(t, out.sizes()));
  std::vector<const int64_t*> ptrs;
  for (auto& s : strides) ptrs.push_back(s.data());
  ck::OffsetCalc c;
  GB_CHECK(ck::make_offset_calc(c, int(out.dim()), out.sizes().data(), ptrs.data(), int(ptrs.size())),
           "cuda kernels: a tensor of ", out.dim(), " dims whose strides leave more than ", ck::kMaxDims,
           " dims after merging; call .contiguous() on the operands first");
  return c;
}

int device_of(const Tensor& t) { return t.device().index(); }

}  // namespace

void throw_no_cuda_kernel(const char* op) {
  throw Error(str_cat(op, ": no CUDA kernel in this build yet (glassbox's CUDA backend covers elementwise arithmetic, ",
                      "comparisons, sum/mean/max/min, matrix products and copies so far); compute this op on the cpu ",
                      "with .cpu() and move the result back with .to(gb::kCUDA)"));
}

ck::Pw pw_for_name(const char* op) {
  using ck::Pw;
  // The rows of glassbox/ops/op_table.def whose code is found by name (pw_by_name = 1); the others name theirs.
  static const std::pair<const char*, Pw> table[] = {
#define GB_OP(name, nodes, devices, autocast, pw, by_name, files) {(by_name) ? name : nullptr, Pw::pw},
#define GB_NODE(name, files)
#include "glassbox/ops/op_table.def"
#undef GB_OP
#undef GB_NODE
  };
  // An in-place entry ("relu_") computes what its out-of-place op does.
  const size_t n = std::strlen(op) - (std::strlen(op) > 1 && op[std::strlen(op) - 1] == '_' ? 1 : 0);
  for (const auto& [name, code] : table)
    if (name && std::strlen(name) == n && std::strncmp(name, op, n) == 0) return code;
  return Pw::none;
}

void cuda_pointwise(const char* op, CudaOp cop, const Tensor& out, std::initializer_list<const Tensor*> inputs,
                    ScalarType values) {
  if (cop.op == ck::Pw::none) cop.op = pw_for_name(op);
  if (cop.op == ck::Pw::none || ck::pw_inputs(cop.op) != int(inputs.size())) throw_no_cuda_kernel(op);
  std::vector<Tensor> ins;
  for (const Tensor* t : inputs) {
    check_same_device(out, *t, op);
    ins.push_back(*t);
  }
  ck::PointwiseLaunch l;
  l.device = device_of(out);
  l.args = {cop.op, cop.p0, cop.p1};
  l.dtype = values;
  l.numel = out.numel();
  l.calc = offset_calc(out, ins);
  l.data[0] = static_cast<char*>(out.data_ptr());
  for (size_t k = 0; k < ins.size(); ++k) l.data[k + 1] = static_cast<char*>(ins[k].data_ptr());
  ck::pointwise(l);
}

void cuda_fill(const Tensor& t, double v) {
  cuda_pointwise("fill_", {ck::Pw::fill, v}, t, {}, t.scalar_type());
}

void cuda_copy(const Tensor& dst, const Tensor& src, bool non_blocking) {
  GB_CHECK(dst.sizes() == src.sizes(), "copy_: cuda copies need equal shapes (", dst.sizes(), " and ", src.sizes(),
           "); the op entry broadcasts first");
  if (dst.numel() == 0) return;
  const bool d_cuda = dst.is_cuda(), s_cuda = src.is_cuda();
  if (d_cuda && s_cuda && dst.device() == src.device()) {
    std::vector<Tensor> ins{src};
    ck::CopyLaunch l;
    l.device = device_of(dst);
    l.dst_dtype = dst.scalar_type();
    l.src_dtype = src.scalar_type();
    l.numel = dst.numel();
    l.calc = offset_calc(dst, ins);
    l.dst = static_cast<char*>(dst.data_ptr());
    l.src = static_cast<const char*>(src.data_ptr());
    ck::copy(l);
    return;
  }
  // Across devices the bytes move as they are: same dtype, contiguous on both sides (converted and made contiguous
  // on whichever side can do it, the source's first).
  Tensor s = src.scalar_type() == dst.scalar_type() ? src : shallow_alias(src).to(dst.scalar_type());
  s = s.is_contiguous() ? s : shallow_alias(s).contiguous();
  const bool direct = dst.is_contiguous();
  Tensor d = direct ? dst : make_empty(dst.sizes(), dst.scalar_type(), dst.device());
  const size_t nbytes = size_t(d.nbytes());
  if (d_cuda && s_cuda) {
    ck::memcpy(d.data_ptr(), device_of(d), s.data_ptr(), device_of(s), nbytes, ck::CopyKind::device_to_device, false);
  } else if (d_cuda) {
    GB_CHECK(s.is_cpu(), "copy_: cannot copy from ", s.device().str(), " to ", d.device().str(),
             " (a meta tensor has no values); make the source on the cpu");
    // From pageable memory the runtime copies through its own staging buffer and returns when the source may be
    // reused; from pinned memory with non_blocking the copy overlaps the host.
    const bool wait = !(non_blocking && data::is_pinned(s));
    ck::memcpy(d.data_ptr(), device_of(d), s.data_ptr(), -1, nbytes, ck::CopyKind::host_to_device, wait);
    if (!wait) data::record_pinned_use(s, device_of(d));  // the pinned block is not reused before the copy is done
  } else {
    GB_CHECK(d.is_cpu(), "copy_: cannot copy from ", s.device().str(), " to ", d.device().str(),
             " (a meta tensor has no values)");
    const bool wait = !(non_blocking && data::is_pinned(d));
    ck::memcpy(d.data_ptr(), -1, s.data_ptr(), device_of(s), nbytes, ck::CopyKind::device_to_host, wait);
    if (!wait) data::record_pinned_use(d, device_of(s));
  }
  if (!direct) copy_into(dst, d);  // the strided destination, on its own device
}

ColumnShape column_shape(const Tensor& a, const std::vector<bool>& mask) {
  ColumnShape c;
  if (!a.is_contiguous() || a.numel() == 0) return c;  // empty: the row path's identities (NaN means)
  int64_t first = -1, last = -1;  // the reduced dims, ignoring size-1 ones (they reduce nothing)
  for (int64_t d = 0; d < a.dim(); ++d)
    if (mask[size_t(d)] && a.size(d) != 1) {
      if (first < 0) first = d;
      last = d;
    }
  if (first < 0) return c;
  for (int64_t d = first; d <= last; ++d)
    if (!mask[size_t(d)] && a.size(d) != 1) return c;  // a kept dim between reduced ones: not one run
  ColumnShape r;
  r.outer = r.len = r.inner = 1;
  for (int64_t d = 0; d < a.dim(); ++d) (d < first ? r.outer : d <= last ? r.len : r.inner) *= a.size(d);
  return r;
}

Tensor cuda_reduce(const Tensor& a, const std::vector<bool>& mask, bool keepdim, ck::ReduceOp op) {
  const ScalarType in = a.scalar_type();
  const ScalarType acc = in == kDouble ? kDouble : is_floating_point(in) ? kFloat : kInt64;
  // Kept dims first, reduced dims last, contiguous: each output element is one contiguous row.
  std::vector<int64_t> perm, out_shape;
  int64_t rows = 1, len = 1;
  for (int64_t d = 0; d < a.dim(); ++d)
    if (!mask[size_t(d)]) {
      perm.push_back(d);
      rows *= a.size(d);
    }
  for (int64_t d = 0; d < a.dim(); ++d)
    if (mask[size_t(d)]) {
      perm.push_back(d);
      len *= a.size(d);
    }
  for (int64_t d = 0; d < a.dim(); ++d)
    if (!mask[size_t(d)] || keepdim) out_shape.push_back(mask[size_t(d)] ? 1 : a.size(d));
  // A contiguous input reduced over one run of dims with kept dims after it ((batch, features) over dim 0: a Linear's
  // bias gradient) is [outer, len, inner] as it lies: reduced by columns, no permuted copy.
  if (const ColumnShape c = column_shape(a, mask); c.inner > 1) {
    Tensor out = make_empty(out_shape, acc, a.device());
    if (out.numel() == 0) return out;
    const int64_t scratch_bytes = ck::column_reduce_scratch_bytes(c.outer, c.len, c.inner);
    Tensor scratch = scratch_bytes ? make_empty({scratch_bytes}, kBool, a.device()) : Tensor();
    ck::ColumnReduceLaunch l;
    l.device = device_of(a);
    l.op = op;
    l.in_dtype = in;
    l.outer = c.outer;
    l.len = c.len;
    l.inner = c.inner;
    l.in = static_cast<const char*>(a.data_ptr());
    l.out = static_cast<char*>(out.data_ptr());
    l.scratch = scratch_bytes ? static_cast<char*>(scratch.data_ptr()) : nullptr;
    ck::reduce_columns(l);
    return out;
  }
  Tensor rows_view = shallow_alias(a).permute(perm).contiguous();
  Tensor out = make_empty(out_shape, acc, a.device());
  if (out.numel() == 0) return out;
  const int64_t scratch_bytes = ck::reduce_scratch_bytes(rows, len);
  Tensor scratch = scratch_bytes ? make_empty({scratch_bytes}, kBool, a.device()) : Tensor();
  ck::ReduceLaunch l;
  l.device = device_of(a);
  l.op = op;
  l.in_dtype = in;
  l.rows = rows;
  l.len = len;
  l.in = static_cast<const char*>(rows_view.data_ptr());
  l.out = static_cast<char*>(out.data_ptr());
  l.scratch = scratch_bytes ? static_cast<char*>(scratch.data_ptr()) : nullptr;
  ck::reduce_rows(l);
  return out;
}

}  // namespace gb::detail
