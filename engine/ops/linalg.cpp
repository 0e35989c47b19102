// engine/ops/linalg.cpp — matrix products: mm, bmm, matmul, addmm, linear, dot, outer, with their backward.
//
// Every product ends in one GEMM routine (gemm_batched): float and double go to libxsmm's generated kernels when
// small (ops/small_gemm.h), large floats on AVX-512 CPUs to libxsmm's kernels blocked over the pool
// (ops/blocked_gemm.h), the rest to OpenBLAS sgemm/dgemm; the 16-bit floats through float, integers through a plain
// loop. An operand that is row-major or column-major in memory
// (a contiguous matrix or a .t() view of one) is passed as is with the matching transpose flag; only other
// layouts are copied. Backward formulas are written with mm/bmm themselves, so double backward works.
#include <cblas.h>

#include <climits>

#include "amp/autocast_hook.h"
#include "autograd/record.h"
#include "core/device_kernel.h"
#include "core/dispatch.h"
#include "core/make.h"
#include "core/op_scope.h"
#include "cuda/launch.h"
#include "cuda/ops.h"
#include "glassbox/core/cuda.h"
#include "glassbox/core/parallel.h"
#include "glassbox/ops/factory.h"
#include "glassbox/ops/linalg.h"
#include "glassbox/ops/pointwise.h"
#include "glassbox/ops/reduce.h"
#include "glassbox/ops/shape.h"
#include "ops/blocked_gemm.h"
#include "ops/cuda_gemm.h"
#include "ops/gemm.h"
#include "ops/inplace.h"
#include "ops/small_gemm.h"

namespace gb {
namespace {

// The C++ spelling PyTorch prints for a dtype in its matmul messages ("float != double").
const char* cpp_name(ScalarType t) {
  switch (t) {
    case kBool:
      return "bool";
    case kUInt8:
      return "unsigned char";
    case kInt8:
      return "signed char";
    case kInt16:
      return "short int";
    case kInt32:
      return "int";
    case kInt64:
      return "long int";
    case kHalf:
      return "c10::Half";
    case kBFloat16:
      return "c10::BFloat16";
    case kFloat:
      return "float";
    case kDouble:
      return "double";
  }
  return "unknown";
}

// "2x3" (PyTorch's way of writing a matrix shape in mm errors).
std::string x_shape(IntArrayRef s) {
  std::string r;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) r += 'x';
    r += std::to_string(s[i]);
  }
  return r;
}

void check_mat_dtypes(const Tensor& a, const Tensor& b, const char* op) {
  GB_CHECK_TYPE(a.scalar_type() == b.scalar_type(), op,
                ": expected m1 and m2 to have the same dtype, but got: ", cpp_name(a.scalar_type()),
                " != ", cpp_name(b.scalar_type()), ". Convert one operand first, e.g. b.to(a.scalar_type())");
  GB_CHECK_TYPE(a.scalar_type() != kBool, op,
                ": matrix products of bool tensors are not supported; convert to an "
                "integer or floating dtype first");
}

// ---- GEMM: out(B,N,M) = beta * out + alpha * a(B,N,K) @ b(B,K,M); out is contiguous ----
// The operands are (B,R,C) tensors or (R,C) matrices (a batch of one), read through their strides: no view is made
// per call (mm and addmm run in a tiny model's every step, where a view's TensorImpl costs as much as the product).

// One operand's matrices: batch, rows and columns with their strides over the tensor's memory.
struct Mats {
  const Tensor* t;  // the tensor read (or blas_ready's contiguous copy of it)
  Tensor copy;
  int64_t nb, rows, cols, sb, sr, sc;
  explicit Mats(const Tensor& x) : t(&x) { read(x); }
  Mats(const Mats&) = delete;
  Mats& operator=(const Mats&) = delete;
  void read(const Tensor& x) {
    const IntArrayRef sz = x.sizes(), st = x.strides();
    const size_t o = sz.size() == 3 ? 1 : 0;
    nb = o ? sz[0] : 1;
    sb = o ? st[0] : 0;
    rows = sz[o];
    cols = sz[o + 1];
    sr = st[o];
    sc = st[o + 1];
  }
  // Replaces the operand by a contiguous copy (its layout suits no BLAS call).
  void make_contiguous() {
    copy = detail::shallow_alias(*t).contiguous();
    t = &copy;
    read(copy);
  }
};

// How one (R,C) matrix operand reaches BLAS: as is (row-major), transposed (column-major), or not at all.
struct BlasLayout {
  bool ok = false;
  CBLAS_TRANSPOSE trans = CblasNoTrans;
  int64_t ld = 0;
};

BlasLayout blas_layout(int64_t rows, int64_t cols, int64_t s0, int64_t s1) {
  // strides of size-1 dims carry no information; pick ones that satisfy BLAS's ld >= max(1, cols)
  if ((s1 == 1 || cols == 1) && (rows == 1 || s0 >= std::max<int64_t>(cols, 1)))
    return {true, CblasNoTrans, rows == 1 ? std::max<int64_t>(cols, 1) : s0};
  if ((s0 == 1 || rows == 1) && (cols == 1 || s1 >= std::max<int64_t>(rows, 1)))
    return {true, CblasTrans, cols == 1 ? std::max<int64_t>(rows, 1) : s1};
  return {};
}

bool fits_blas_int(int64_t v) { return v <= INT_MAX; }

template <typename T>
void blas_gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t n, int64_t m, int64_t k, T alpha, const T* a,
               int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, ta, tb, int(n), int(m), int(k), alpha, a, int(lda), b, int(ldb), beta, c, int(ldc));
  else
    cblas_dgemm(CblasRowMajor, ta, tb, int(n), int(m), int(k), alpha, a, int(lda), b, int(ldb), beta, c, int(ldc));
}

// Copies x's matrices when they are neither row- nor column-major.
BlasLayout blas_ready(Mats& x) {
  BlasLayout lay = blas_layout(x.rows, x.cols, x.sr, x.sc);
  if (lay.ok && fits_blas_int(lay.ld)) return lay;
  x.make_contiguous();
  return blas_layout(x.rows, x.cols, x.sr, x.sc);
}

// Multiply-adds (n * m * k) at or below which one GEMM runs on a single OpenBLAS thread (see gemm_blas).
constexpr double kSmallGemm = 4.0 * 1024 * 1024;

template <typename T>
void gemm_blas(const Tensor& out_t, const Tensor& a_t, const Tensor& b_t, double alpha, double beta) {
  Mats out(out_t), a(a_t), b(b_t);
  const BlasLayout la = blas_ready(a), lb = blas_ready(b);
  const int64_t nb = out.nb, n = out.rows, m = out.cols, k = a.cols;
  GB_CHECK(fits_blas_int(n) && fits_blas_int(m) && fits_blas_int(k), "matmul: matrix dims ", n, "x", k, " and ", k, "x",
           m, " exceed what BLAS can index (2^31 - 1)");
  // meta stops here: the operands are made (blas_ready's copies too); no GEMM
  detail::run_cpu_kernel("mm", out_t, [&] {
    const int threads = get_num_threads();   // (also makes sure OpenBLAS has been given glassbox's thread count)
    const T* ap = a.t->data_ptr<T>();
    const T* bp = b.t->data_ptr<T>();
    T* cp = out_t.data_ptr<T>();
    auto one = [&](int64_t i) {
      blas_gemm<T>(la.trans, lb.trans, n, m, k, T(alpha), ap + i * a.sb, la.ld, bp + i * b.sb, lb.ld, T(beta),
                   cp + i * n * m, std::max<int64_t>(m, 1));
    };
    // The batch's matrices, one single-threaded product each, spread over the pool (inline inside a parallel region).
    auto each_matrix = [&](const auto& product) {
      if (nb > 1 && threads > 1 && !detail::in_parallel_region())
        parallel_for(0, nb, 1, [&](int64_t i0, int64_t i1) {
          for (int64_t i = i0; i < i1; ++i) product(i);
        });
      else
        for (int64_t i = 0; i < nb; ++i) product(i);
    };
    // A float product on an AVX-512 CPU past small_gemm's reach, or a single one of a mid size when the pool has more
    // than one thread, runs on libxsmm's kernels blocked over the pool (ops/blocked_gemm.h), the batch's matrices one
    // after the other, each split over the threads.
    if constexpr (std::is_same_v<T, float>) {
      const int split = detail::in_parallel_region() ? 1 : threads;
      if (detail::blocked_gemm_fits(n, m, k, alpha, beta, nb == 1 ? split : 1)) {
        for (int64_t i = 0; i < nb; ++i)
          if (!detail::blocked_gemm(la.trans == CblasTrans, lb.trans == CblasTrans, n, m, k, ap + i * a.sb, la.ld,
                                    bp + i * b.sb, lb.ld, T(beta), cp + i * n * m, std::max<int64_t>(m, 1), split)) {
            detail::park_workers();  // no kernel generated for it (C untouched): OpenBLAS's, on its threads
            one(i);
          }
        return;
      }
    }
    // A product small enough for libxsmm runs on its generated kernel (ops/small_gemm.h), one per matrix, the batch's
    // matrices spread over the pool; OpenBLAS's threads are not involved.
    if (detail::small_gemm_fits(lb.trans == CblasTrans, n, m, k, alpha, beta)) {
      auto small = [&](int64_t i) {
        if (!detail::small_gemm<T>(la.trans == CblasTrans, lb.trans == CblasTrans, n, m, k, T(alpha), ap + i * a.sb,
                                   la.ld, bp + i * b.sb, lb.ld, T(beta), cp + i * n * m, std::max<int64_t>(m, 1)))
          one(i);  // no kernel generated for it: OpenBLAS's
      };
      each_matrix(small);
      return;
    }
    if (threads == 1 || double(n) * double(m) * double(k) > kSmallGemm) {
      detail::park_workers();  // OpenBLAS's threads take the cores: glassbox's idle workers sleep instead of spinning
      for (int64_t i = 0; i < nb; ++i) one(i);
      return;
    }
    // A small GEMM runs on one OpenBLAS thread. Waking OpenBLAS's workers costs more than they save below ~8 MFLOP
    // (the small CNN's classifier, 64x1568x10: 47 us on one thread, 60 on two), and when another library's threads
    // (oneDNN's OpenMP team, spinning a while after a convolution) hold the other core, the wake-up waits for the
    // scheduler: those GEMMs measured 1.1-1.6 ms a call in the small CNN's trace. A batch of them (attention's bmm)
    // is spread over glassbox's pool, one single-threaded GEMM per matrix, as a batch of row kernels would be.
    struct OneBlasThread {
      int restore;
      explicit OneBlasThread(int n) : restore(n) { openblas_set_num_threads(1); }
      ~OneBlasThread() { openblas_set_num_threads(restore); }
    } one_thread(threads);
    each_matrix(one);
  });
}

template <typename T>
void gemm_loop(const Tensor& out_t, const Tensor& a_t, const Tensor& b_t, double alpha, double beta) {
  detail::run_cpu_kernel("mm", out_t, [&] {
    const Mats out(out_t), a(a_t), b(b_t);
    const int64_t nb = out.nb, n = out.rows, m = out.cols, k = a.cols;
    const T* ap = a_t.data_ptr<T>();
    const T* bp = b_t.data_ptr<T>();
    T* cp = out_t.data_ptr<T>();
    T al = T(alpha), be = T(beta);
    parallel_for(0, nb * n, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, m * k)), [&](int64_t r0, int64_t r1) {
      std::vector<T> acc(m);
      for (int64_t r = r0; r < r1; ++r) {
        int64_t bi = r / n, i = r % n;
        std::fill(acc.begin(), acc.end(), T(0));
        for (int64_t p = 0; p < k; ++p) {
          T av = ap[bi * a.sb + i * a.sr + p * a.sc];
          const T* brow = bp + bi * b.sb + p * b.sr;
          for (int64_t j = 0; j < m; ++j) acc[j] += av * brow[j * b.sc];
        }
        T* crow = cp + r * m;
        for (int64_t j = 0; j < m; ++j) crow[j] = (be == T(0) ? T(0) : be * crow[j]) + al * acc[j];
      }
    });
  });
}

void gemm_cpu(const Tensor& out, const Tensor& a, const Tensor& b, double alpha, double beta);

// out (B,N,M) contiguous; a (B,N,K), b (B,K,M) of out's dtype, any strides (or all three (N,M), (N,K), (K,M)).
// beta == 0 ignores out's contents.
void gemm_batched(const Tensor& out, const Tensor& a, const Tensor& b, double alpha, double beta) {
  if (out.numel() == 0) return;
  const int64_t k = a.sizes().back();
  if (k == 0) {  // empty sum: BLAS may not touch C, so scale it here (on every device)
    NoGradGuard ng;
    if (beta == 0.0)
      detail::shallow_alias(out).zero_();
    else if (beta != 1.0)
      detail::shallow_alias(out).mul_(beta);
    return;
  }
  detail::run_op(out.device(), [&] { gemm_cpu(out, a, b, alpha, beta); },
                 [&] { cuda_ops::gemm(out, a, b, alpha, beta); });
}

// gemm_batched's cpu and meta half, by dtype: OpenBLAS (and libxsmm) for the floats, a loop for the integers.
void gemm_cpu(const Tensor& out, const Tensor& a, const Tensor& b, double alpha, double beta) {
  switch (out.scalar_type()) {
    case kFloat:
      return gemm_blas<float>(out, a, b, alpha, beta);
    case kDouble:
      return gemm_blas<double>(out, a, b, alpha, beta);
    case kHalf:
    case kBFloat16: {  // through float: convert the operands once, multiply, round the result once
      Tensor a32 = detail::shallow_alias(a).to(kFloat);
      Tensor b32 = detail::shallow_alias(b).to(kFloat);
      Tensor o32 =
          beta == 0.0 ? detail::make_empty(out.sizes(), kFloat, out.device()) : detail::shallow_alias(out).to(kFloat);
      gemm_blas<float>(o32, a32, b32, alpha, beta);
      detail::copy_into(out, o32);
      return;
    }
    case kInt64:
      return gemm_loop<int64_t>(out, a, b, alpha, beta);
    case kInt32:
      return gemm_loop<int32_t>(out, a, b, alpha, beta);
    case kInt16:
      return gemm_loop<int16_t>(out, a, b, alpha, beta);
    case kInt8:
      return gemm_loop<int8_t>(out, a, b, alpha, beta);
    case kUInt8:
      return gemm_loop<uint8_t>(out, a, b, alpha, beta);
    case kBool:
      break;
  }
  detail::throw_unsupported_dtype("matmul", out.scalar_type(), "a floating or integer dtype");
}

void check_matrix(const Tensor& t, const char* op, const char* arg) {
  detail::check_device(t, op, arg);
  GB_CHECK(t.dim() == 2, op, ": ", arg, " must be a matrix, got a ", t.dim(), "-D tensor of shape ", t.sizes());
}

void check_mm_shapes(const Tensor& a, const Tensor& b, const char* op) {
  detail::check_same_device(a, b, op);
  GB_CHECK(a.size(1) == b.size(0), op, ": mat1 and mat2 shapes cannot be multiplied (", x_shape(a.sizes()), " and ",
           x_shape(b.sizes()), "): mat1's columns (", a.size(1), ") must equal mat2's rows (", b.size(0), ")");
}

}  // namespace

// The launch record of a product on cuda:N (cuda/kernels.h), the operands laid out as for the CPU's BLAS.
detail::CudaGemm detail::cuda_gemm(const Tensor& out_t, const Tensor& a_t, const Tensor& b_t, double alpha,
                                   double beta) {
  Mats out(out_t), a(a_t), b(b_t);
  const BlasLayout la = blas_ready(a), lb = blas_ready(b);
  CudaGemm g;
  g.a_copy = a.copy;  // the copies blas_ready made, kept with the record that points into them
  g.b_copy = b.copy;
  cuda_kernels::GemmLaunch& l = g.launch;
  l.device = int(out_t.device().index());
  l.dtype = out_t.scalar_type();
  l.batch = out.nb;
  l.n = out.rows;
  l.m = out.cols;
  l.k = a.cols;
  l.trans_a = la.trans == CblasTrans;
  l.trans_b = lb.trans == CblasTrans;
  l.lda = la.ld;
  l.ldb = lb.ld;
  l.stride_a = a.nb == 1 ? 0 : a.sb;
  l.stride_b = b.nb == 1 ? 0 : b.sb;
  l.a = static_cast<const char*>(a.t->data_ptr());
  l.b = static_cast<const char*>(b.t->data_ptr());
  l.out = static_cast<char*>(out_t.data_ptr());
  l.alpha = alpha;
  l.beta = beta;
  l.allow_tf32 = backends::cuda::matmul::allow_tf32.load(std::memory_order_relaxed);
  return g;
}

// ---- mm ----

void detail::gemm_into(const Tensor& out, const Tensor& a, const Tensor& b, double alpha, double beta) {
  gemm_batched(out, a, b, alpha, beta);
}

Tensor mm(const Tensor& a, const Tensor& b) {
  GB_AUTOCAST(lower_precision_fp, mm, a, b);
  detail::OpScope op_scope("mm", {a, b});
  check_matrix(a, "mm", "self");
  check_matrix(b, "mm", "mat2");
  check_mat_dtypes(a, b, "mm");
  check_mm_shapes(a, b, "mm");
  op_scope.set_flops(2 * a.size(0) * b.size(1) * a.size(1));
  Tensor out = detail::make_empty({a.size(0), b.size(1)}, a.scalar_type(), a.device());
  gemm_batched(out, a, b, 1.0, 0.0);
  op_scope.set_output(out);
  if (autograd::needs_grad(a, b))
    autograd::record("MmBackward0", {a, b}, out, {autograd::input(a), autograd::input(b)},
                     [](autograd::BackwardContext& c) {
                       const Tensor& g = c.grad();
                       return variable_list{c.needs(0) ? g.mm(c.saved(1).t()) : Tensor(),
                                            c.needs(1) ? c.saved(0).t().mm(g) : Tensor()};
                     });
  return out;
}

// ---- addmm: beta * self + alpha * (a @ b), one GEMM over an output pre-filled with self ----

Tensor addmm(const Tensor& self, const Tensor& a, const Tensor& b, const Scalar& beta, const Scalar& alpha) {
  GB_AUTOCAST(lower_precision_fp, addmm, self, a, b, beta, alpha);
  detail::OpScope op_scope("addmm", {self, a, b});
  detail::check_device(self, "addmm", "self");
  check_matrix(a, "addmm", "mat1");
  check_matrix(b, "addmm", "mat2");
  check_mat_dtypes(a, b, "addmm");
  GB_CHECK_TYPE(self.scalar_type() == a.scalar_type(),
                "addmm: expected self and mat1 to have the same dtype, but got: ", cpp_name(self.scalar_type()),
                " != ", cpp_name(a.scalar_type()));
  check_mm_shapes(a, b, "addmm");
  detail::check_same_device(a, self, "addmm");
  std::vector<int64_t> shape{a.size(0), b.size(1)};
  bool fits = self.dim() <= 2;
  for (int64_t d = 0; fits && d < self.dim(); ++d) {
    int64_t want = shape[2 - self.dim() + d];
    fits = self.size(d) == want || self.size(d) == 1;
  }
  GB_CHECK(fits, "addmm: self of shape ", self.sizes(), " cannot be broadcast to the product's shape ",
           IntArrayRef(shape), " (mat1 ", a.sizes(), " @ mat2 ", b.sizes(), ")");
  op_scope.set_flops(2 * a.size(0) * b.size(1) * a.size(1) + a.size(0) * b.size(1));
  double be = beta.to_double(), al = alpha.to_double();
  Tensor out = detail::make_empty(shape, a.scalar_type(), a.device());
  // a bias vector on cuda: added by the GEMM's epilogue; otherwise out starts as self and the GEMM adds into it
  const bool vector_bias = be == 1.0 && al == 1.0 && self.dim() == 1 && self.size(0) == shape[1];
  const bool bias_epilogue = vector_bias && detail::run_op(
                                                out.device(), [] { return false; },
                                                [&] { return cuda_ops::gemm_and_bias(out, a, b, self); });
  if (!bias_epilogue) {
    if (be != 0.0) detail::copy_into(out, self);
    gemm_batched(out, a, b, al, be);
  }
  op_scope.set_output(out);
  if (autograd::needs_grad(self, a, b))
    autograd::record("AddmmBackward0", {self, a, b}, out, {autograd::input(a), autograd::input(b)},
                     [ss = DimVector(self.sizes()), be, al](autograd::BackwardContext& c) {
                       const Tensor& g = c.grad();
                       Tensor gs, ga, gb;
                       if (c.needs(0)) gs = sum_to(be == 1.0 ? g : g * be, ss);
                       if (c.needs(1)) ga = al == 1.0 ? g.mm(c.saved(1).t()) : g.mm(c.saved(1).t()) * al;
                       if (c.needs(2)) gb = al == 1.0 ? c.saved(0).t().mm(g) : c.saved(0).t().mm(g) * al;
                       return variable_list{gs, ga, gb};
                     });
  return out;
}

// ---- _addmm_activation: relu or GELU of addmm as one op (libtorch's at::_addmm_activation) ----
//
// PyTorch's fused bias + activation. On cuda, a bias vector at beta = alpha = 1 goes to cuBLASLt's RELU_BIAS /
// GELU_BIAS epilogue: the product, the bias and the activation in one kernel, no pass over the output; otherwise, and
// on the cpu, addmm then the activation in place on its output (PyTorch's fallback). GELU is the exact form on the
// cpu and the tanh form on cuda, as in PyTorch (cuBLASLt's epilogue computes the tanh form). Not differentiable, as in
// PyTorch: with an input that requires grad it records a NotImplemented node whose backward says so; training keeps
// Linear + ReLU, whose two nodes PyTorch's graph has.
Tensor _addmm_activation(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta,
                         const Scalar& alpha, bool use_gelu) {
  const char* op = "_addmm_activation";
  detail::OpScope op_scope(op, {self, mat1, mat2});
  detail::check_device(self, op, "self");
  check_matrix(mat1, op, "mat1");
  check_matrix(mat2, op, "mat2");
  check_mat_dtypes(mat1, mat2, op);
  check_mm_shapes(mat1, mat2, op);
  detail::check_same_device(mat1, self, op);
  GB_CHECK_TYPE(self.scalar_type() == mat1.scalar_type(), op, ": expected self and mat1 to have the same dtype, but got: ",
                cpp_name(self.scalar_type()), " != ", cpp_name(mat1.scalar_type()));
  const double be = beta.to_double(), al = alpha.to_double();
  Tensor out;
  {
    NoGradGuard ng;
    const bool vector_bias = be == 1.0 && al == 1.0 && self.dim() == 1 && self.size(0) == mat2.size(1);
    out = detail::run_op(
        mat1.device(), [] { return Tensor(); },
        [&] {  // the epilogue, when it takes the product
          if (!vector_bias) return Tensor();
          Tensor o = detail::make_empty({mat1.size(0), mat2.size(1)}, mat1.scalar_type(), mat1.device());
          const auto epilogue = use_gelu ? cuda_kernels::GemmEpilogue::gelu_bias : cuda_kernels::GemmEpilogue::relu_bias;
          return cuda_ops::gemm_and_bias(o, mat1, mat2, self, epilogue) ? o : Tensor();
        });
    if (!out.defined()) {
      out = addmm(self, mat1, mat2, beta, alpha);
      if (use_gelu)  // PyTorch's GELU here: exact on the cpu, the tanh form on cuda (the epilogue's)
        out = gelu(out, detail::run_op(out.device(), [] { return "none"; }, [] { return "tanh"; }));
      else
        out.relu_();
    }
  }
  op_scope.set_flops(2 * mat1.size(0) * mat2.size(1) * mat1.size(1) + 2 * mat1.size(0) * mat2.size(1));
  op_scope.set_output(out);
  if (autograd::needs_grad(self, mat1, mat2))
    autograd::record("NotImplemented", {self, mat1, mat2}, out, {}, [](autograd::BackwardContext&) -> variable_list {
      throw Error(
          "the derivative for '_addmm_activation' is not implemented (as in PyTorch). To train through it, write "
          "relu(addmm(self, mat1, mat2)) or F::relu(F::linear(x, w, b)); use _addmm_activation under NoGradGuard");
    });
  return out;
}

// ---- bmm ----

Tensor bmm(const Tensor& a, const Tensor& b) {
  GB_AUTOCAST(lower_precision_fp, bmm, a, b);
  detail::OpScope op_scope("bmm", {a, b});
  detail::check_device(a, "bmm", "self");
  detail::check_device(b, "bmm", "mat2", a);
  GB_CHECK(a.dim() == 3, "bmm: batch1 must be a 3D tensor, got shape ", a.sizes());
  GB_CHECK(b.dim() == 3, "bmm: batch2 must be a 3D tensor, got shape ", b.sizes());
  check_mat_dtypes(a, b, "bmm");
  GB_CHECK(a.size(0) == b.size(0) && a.size(2) == b.size(1),
           "bmm: Expected size for first two dimensions of batch2 tensor to be: [", a.size(0), ", ", a.size(2),
           "] but got: [", b.size(0), ", ", b.size(1), "] (shapes ", a.sizes(), " and ", b.sizes(), ")");
  op_scope.set_flops(2 * a.size(0) * a.size(1) * b.size(2) * a.size(2));
  Tensor out = detail::make_empty({a.size(0), a.size(1), b.size(2)}, a.scalar_type(), a.device());
  gemm_batched(out, a, b, 1.0, 0.0);
  op_scope.set_output(out);
  if (autograd::needs_grad(a, b))
    autograd::record("BmmBackward0", {a, b}, out, {autograd::input(a), autograd::input(b)},
                     [](autograd::BackwardContext& c) {
                       const Tensor& g = c.grad();
                       return variable_list{c.needs(0) ? g.bmm(c.saved(1).transpose(1, 2)) : Tensor(),
                                            c.needs(1) ? c.saved(0).transpose(1, 2).bmm(g) : Tensor()};
                     });
  return out;
}

// ---- matmul (NumPy semantics) ----

namespace {

// PyTorch's should_fold: (…,N,K) @ (K,M) runs as one (…N,K) @ (K,M) GEMM when the batch dims flatten without a
// copy (or when the big operand requires grad, so its weight gradient is one GEMM too instead of a batch + sum).
bool should_fold(const Tensor& a, const Tensor& b) {
  bool a_larger = a.dim() >= b.dim();
  const Tensor& big = a_larger ? a : b;
  int64_t dim_big = big.dim(), dim_small = a_larger ? b.dim() : a.dim();
  if (!(dim_big >= 3 && dim_small <= 2)) return false;
  if (big.requires_grad() && GradMode::is_enabled()) return true;
  if (a.dim() == 2) return false;  // folding b would need a transposed copy of the result
  if (big.numel() == 0) return true;
  // the batch dims of big (all but the last two, then the second-to-last) must merge into one stride
  Tensor t1 = a_larger ? a : b.transpose(-1, -2);
  for (int64_t i = 0; i < dim_big - 2; ++i)
    if (t1.stride(i) != t1.stride(i + 1) * t1.size(i + 1)) return false;
  return true;
}

}  // namespace

namespace {

// matmul's result once its arguments are checked: one dot, mm or bmm (each records its own node) and views.
Tensor matmul_checked(const Tensor& a, const Tensor& b) {
  const int64_t da = a.dim(), db = b.dim();
  if (da == 1 && db == 1) return dot(a, b);
  if (da == 2 && db == 1) return mm(a, b.unsqueeze(1)).squeeze(1);
  if (da == 1 && db == 2) return mm(a.unsqueeze(0), b).squeeze(0);
  if (da == 2 && db == 2) return mm(a, b);

  if (should_fold(a, b)) {
    bool transpose = db > da;  // fold b instead: (a @ b)^T = b^T @ a^T
    Tensor t1 = transpose ? b.transpose(-1, -2) : a;
    Tensor t2 = !transpose ? b : da == 2 ? a.t() : a;
    std::vector<int64_t> out_shape(t1.sizes().begin(), t1.sizes().end() - 1);
    int64_t rows = detail::numel_of(out_shape);
    Tensor folded = t1.reshape({rows, t1.size(-1)});
    if (t2.dim() == 1) return mm(folded, t2.unsqueeze(1)).view(out_shape);
    out_shape.push_back(t2.size(1));
    Tensor r = mm(folded, t2).view(out_shape);
    return transpose ? r.transpose(-1, -2) : r;
  }

  // general case: broadcast the batch dims, run one bmm over (B,N,K) @ (B,K,M)
  Tensor a3 = da == 1 ? a.unsqueeze(0) : a;
  Tensor b3 = db == 1 ? b.unsqueeze(1) : b;
  std::vector<int64_t> ba(a3.sizes().begin(), a3.sizes().end() - 2), bb(b3.sizes().begin(), b3.sizes().end() - 2);
  std::vector<int64_t> batch = broadcast_shapes(ba, bb, "matmul");
  int64_t nbatch = detail::numel_of(batch), n = a3.size(-2), k = a3.size(-1), m = b3.size(-1);
  auto with = [&](int64_t r, int64_t c) {
    std::vector<int64_t> s = batch;
    s.push_back(r);
    s.push_back(c);
    return s;
  };
  Tensor ea = a3.sizes() == IntArrayRef(with(n, k)) ? a3 : a3.expand(with(n, k));
  Tensor eb = b3.sizes() == IntArrayRef(with(k, m)) ? b3 : b3.expand(with(k, m));
  Tensor out = bmm(ea.reshape({nbatch, n, k}), eb.reshape({nbatch, k, m}));
  std::vector<int64_t> out_shape = batch;
  if (da > 1) out_shape.push_back(n);
  if (db > 1) out_shape.push_back(m);
  return out.view(out_shape);
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  GB_AUTOCAST(lower_precision_fp, matmul, a, b);
  detail::OpScope op_scope("matmul", {a, b});
  detail::check_device(a, "matmul", "self");
  detail::check_device(b, "matmul", "other", a);
  const int64_t da = a.dim(), db = b.dim();
  GB_CHECK(da > 0 && db > 0, "matmul: both arguments to matmul need to be at least 1D, but they are ", da, "D and ", db,
           "D");
  check_mat_dtypes(a, b, "matmul");
  const int64_t ka = a.size(-1), kb = db == 1 ? b.size(0) : b.size(-2);
  GB_CHECK(ka == kb, "matmul: mat1 and mat2 shapes cannot be multiplied (", x_shape(a.sizes()), " and ",
           x_shape(b.sizes()), "): the last dim of the first (", ka, ") must equal the ",
           db == 1 ? "size of the 1-D second (" : "second-to-last dim of the second (", kb, ")");
  // 2 K per output element; the output is the broadcast batch dims x rows x columns (1-D sides drop theirs)
  int64_t outputs = (da >= 2 ? a.size(-2) : 1) * (db >= 2 ? b.size(-1) : 1);
  for (int64_t i = 3; i <= std::max(da, db); ++i) {
    const int64_t sa = i <= da ? a.size(-i) : 1, sb = i <= db ? b.size(-i) : 1;
    outputs *= sa == 1 ? sb : sa;
  }
  op_scope.set_flops(2 * outputs * ka);
  Tensor out = matmul_checked(a, b);
  op_scope.set_output(out);
  return out;
}

// ---- linear ----

Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  GB_AUTOCAST(lower_precision_fp, linear, input, weight, bias);
  detail::OpScope op_scope("linear", {input, weight, bias});
  detail::check_device(input, "linear", "input");
  check_matrix(weight, "linear", "weight");
  detail::check_same_device(input, weight, "linear");
  GB_CHECK(input.dim() >= 1, "linear: input must have at least 1 dim (its last dim is in_features), got shape ",
           input.sizes());
  GB_CHECK(input.size(-1) == weight.size(1), "linear: mat1 and mat2 shapes cannot be multiplied (",
           x_shape(input.dim() == 1
                       ? std::vector<int64_t>{1, input.size(0)}
                       : std::vector<int64_t>{input.numel() / std::max<int64_t>(input.size(-1), 1), input.size(-1)}),
           " and ", x_shape(std::vector<int64_t>{weight.size(1), weight.size(0)}), "): input ", input.sizes(),
           " has in_features ", input.size(-1), " but weight ", weight.sizes(), " expects ", weight.size(1));
  if (bias.defined()) {
    detail::check_device(bias, "linear", "bias", input);
    GB_CHECK(bias.dim() <= 1 && (bias.dim() == 0 || bias.size(0) == weight.size(0) || bias.size(0) == 1),
             "linear: bias of shape ", bias.sizes(), " does not match out_features ", weight.size(0), " of weight ",
             weight.sizes());
  }
  // fold the leading dims into rows: one GEMM whatever the input's rank
  std::vector<int64_t> out_shape(input.sizes().begin(), input.sizes().end() - 1);
  out_shape.push_back(weight.size(0));
  int64_t rows = 1;  // the leading dims folded
  for (int64_t d = 0; d + 1 < input.dim(); ++d) rows *= input.size(d);
  const int64_t out_features = weight.size(0), in_features = weight.size(1);
  op_scope.set_flops(2 * rows * in_features * out_features + (bias.defined() ? rows * out_features : 0));
  Tensor y;
  {
    NoGradGuard ng;  // one node for the whole layer, recorded below
    Tensor x2 = input.dim() == 2 ? input : input.reshape({-1, input.size(-1)});
    y = bias.defined() ? addmm(bias, x2, weight.t()) : mm(x2, weight.t());
    if (input.dim() != 2) y = y.view(out_shape);
  }
  op_scope.set_output(y);
  // LinearBackward0: every gradient comes out of one GEMM already in its parameter's layout (grad_weight is
  // g^T @ x, contiguous (out,in)), so nothing is transposed or copied on the way to .grad.
  if (autograd::needs_grad(input, weight, bias))
    autograd::record("LinearBackward0", {input, weight, bias}, y, {autograd::input(input), autograd::input(weight)},
                     [in_shape = DimVector(input.sizes()),
                      bs = bias.defined() ? DimVector(bias.sizes()) : DimVector()](autograd::BackwardContext& c) {
                       const Tensor& x = c.saved(0);
                       const Tensor& w = c.saved(1);
                       const bool flat = x.dim() == 2;  // (rows, in) already: no views to fold the leading dims
                       Tensor g2 = flat ? c.grad() : c.grad().reshape({-1, w.size(0)});  // (rows, out)
                       Tensor gx, gw, gbias;
                       if (c.needs(0)) gx = flat ? g2.mm(w) : g2.mm(w).reshape(in_shape);
                       if (c.needs(1)) gw = g2.t().mm(flat ? x : x.reshape({-1, w.size(1)}));
                       if (c.needs(2)) gbias = sum_to(g2.sum({0}), bs);
                       return variable_list{gx, gw, gbias};
                     });
  return y;
}

// ---- dot / outer ----

Tensor dot(const Tensor& a, const Tensor& b) {
  GB_AUTOCAST(promote, dot, a, b);
  detail::OpScope op_scope("dot", {a, b});
  detail::check_device(a, "dot", "self");
  detail::check_device(b, "dot", "tensor", a);
  GB_CHECK(a.dim() == 1 && b.dim() == 1, "dot: 1D tensors expected, but got ", a.dim(), "D and ", b.dim(),
           "D tensors (shapes ", a.sizes(), " and ", b.sizes(), ")");
  GB_CHECK_TYPE(a.scalar_type() == b.scalar_type(), "dot : expected both vectors to have same dtype, but found ",
                to_string(a.scalar_type()), " and ", to_string(b.scalar_type()));
  GB_CHECK(a.numel() == b.numel(), "dot: inconsistent tensor size, expected tensor [", a.numel(), "] and src [",
           b.numel(), "] to have the same number of elements, but got ", a.numel(), " and ", b.numel(),
           " elements respectively");
  op_scope.set_flops(2 * a.numel());
  // (1,K) @ (K,1): a strided vector is a valid BLAS operand either way, so nothing is copied
  Tensor out = detail::run_op(
      a.device(),
      [&] {
        Tensor o = detail::make_empty({}, a.scalar_type(), a.device());
        Tensor ar = detail::make_view(a, {1, 1, a.size(0)}, {0, 0, a.stride(0)}, a.storage_offset());
        Tensor bc = detail::make_view(b, {1, b.size(0), 1}, {0, b.stride(0), 0}, b.storage_offset());
        gemm_batched(detail::make_view(o, {1, 1, 1}, {1, 1, 1}, 0), ar, bc, 1.0, 0.0);
        return o;
      },
      [&] {  // a (1,K) x (K,1) product on cuBLAS
        NoGradGuard ng;
        return a.view({1, -1}).mm(b.view({-1, 1})).view({});
      });
  op_scope.set_output(out);
  if (autograd::needs_grad(a, b))
    autograd::record(
        "DotBackward0", {a, b}, out, {autograd::input(a), autograd::input(b)}, [](autograd::BackwardContext& c) {
          const Tensor& g = c.grad();
          return variable_list{c.needs(0) ? g * c.saved(1) : Tensor(), c.needs(1) ? g * c.saved(0) : Tensor()};
        });
  return out;
}

Tensor outer(const Tensor& a, const Tensor& b) {
  detail::OpScope op_scope("outer", {a, b});
  detail::check_device(a, "outer", "self");
  detail::check_device(b, "outer", "vec2", a);
  GB_CHECK(a.dim() == 1, "outer: Expected 1-D argument self, but got ", a.dim(), "-D (shape ", a.sizes(), ")");
  GB_CHECK(b.dim() == 1, "outer: Expected 1-D argument vec2, but got ", b.dim(), "-D (shape ", b.sizes(), ")");
  Tensor out = a.unsqueeze(1) * b;
  op_scope.set_output(out);
  return out;
}

}  // namespace gb
