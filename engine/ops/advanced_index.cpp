// engine/ops/advanced_index.cpp — indexing with tensors: x.index({mask}), x.index({Slice(), idx}), and
// index_put_ with them (see advanced_index.h for the rules).
//
// Both run the same plan: apply the integers, slices, None and ... as views; turn every mask into the index tensors
// of its true positions; broadcast the index tensors; move the indexed dims to the front and fold them into one
// dim of P rows, so that each position of the broadcast shape names one row. index() is then one index_select of
// rows; index_put_ builds the new rows (the old ones, or values, picked by one index_select over both) and copies
// them back through the view. Both are compositions of differentiable ops, so gradients need no formula of their own.
// On cuda, index() with integer index tensors keeps them on the device (checked there by cuda/index.cu, a bad one
// raised at the next synchronization); masks, and index_put_'s last-writer order, are read on the host.
#include "ops/advanced_index.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "core/composed.h"
#include "core/device_kernel.h"
#include "core/make.h"
#include "core/op_scope.h"
#include "cuda/ops.h"
#include "glassbox/core/error.h"
#include "glassbox/ops/factory.h"
#include "glassbox/ops/pointwise.h"

namespace gb::detail {
namespace {

using indexing::TensorIndex;

struct Plan {
  Tensor r;                    // self after integers, slices, None and ...: a view of self
  std::vector<int64_t> dims;   // r's dims that tensors index, ascending
  std::vector<std::vector<int64_t>> index;  // per dim: the broadcast indices, wrapped into [0, size), row-major
  std::vector<int64_t> B;      // the broadcast shape of the index tensors
  bool in_place = false;       // the result's B dims sit where the indexed dims were (they are adjacent)
  // The device plan (index() on cuda with integer indices only, core/composed.h): the indices never come to the
  // host. Per indexed dim, the broadcast indices wrapped into [0, size), flat int64 on self's device; checked there.
  bool on_device = false;
  std::vector<Tensor> dev;
};

bool is_mask(const Tensor& t) { return t.scalar_type() == kBool || t.scalar_type() == kUInt8; }

// The values of an integer index tensor, as int64, row-major.
std::vector<int64_t> long_values(const Tensor& t, const char* op) {
  check_has_data(t, op, "the result's shape depends on the index's values");
  Tensor c = shallow_alias(t).to(kCPU).to(kInt64).contiguous();
  const int64_t* p = c.data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + c.numel());
}

// The coordinates (one list per mask dim) of the true elements of a mask, in row-major order.
std::vector<std::vector<int64_t>> true_positions(const Tensor& mask, const char* op) {
  check_has_data(mask, op, "the result's size is the number of true elements of the mask");
  Tensor c = shallow_alias(mask).to(kCPU).to(kBool).contiguous();
  const bool* p = c.data_ptr<bool>();
  const int64_t k = c.dim();
  std::vector<std::vector<int64_t>> coords(static_cast<size_t>(k));
  std::vector<int64_t> at(size_t(k), 0);
  for (int64_t i = 0; i < c.numel(); ++i) {
    if (p[i])
      for (int64_t j = 0; j < k; ++j) coords[j].push_back(at[j]);
    for (int64_t j = k - 1; j >= 0; --j) {  // the next coordinate, row-major
      if (++at[j] < c.size(j)) break;
      at[j] = 0;
    }
  }
  return coords;
}

// `from` broadcasts to `to` without changing `to` (the values of index_put_).
bool broadcasts_to(IntArrayRef from, IntArrayRef to) {
  if (from.size() > to.size()) return false;
  for (size_t i = 0; i < from.size(); ++i) {
    const int64_t f = from[from.size() - 1 - i], t = to[to.size() - 1 - i];
    if (f != 1 && f != t) return false;
  }
  return true;
}

// numpy's broadcast of two shapes, or nothing when they do not broadcast.
std::optional<std::vector<int64_t>> broadcast_pair(IntArrayRef a, IntArrayRef b) {
  std::vector<int64_t> out(std::max(a.size(), b.size()));
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1, y = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (x != y && x != 1 && y != 1) return std::nullopt;
    out[out.size() - 1 - i] = x == 1 ? y : x;
  }
  return out;
}

int64_t dims_consumed(const TensorIndex& ix) {
  switch (ix.kind()) {
    case TensorIndex::Kind::Integer:
    case TensorIndex::Kind::Slice:
      return 1;
    case TensorIndex::Kind::Tensor:
      return is_mask(ix.tensor()) ? std::max<int64_t>(ix.tensor().dim(), 0) : 1;
    default:
      return 0;
  }
}

// allow_device: the plan may keep integer indices on self's device (index(), not index_put_, whose last-writer-wins
// order is computed on the host).
Plan make_plan(const Tensor& self, ArrayRef<TensorIndex> indices, const char* op, bool allow_device = false) {
  int64_t consumed = 0;
  bool has_ellipsis = false;
  bool any_mask = false;
  for (const auto& ix : indices)
    if (ix.kind() == TensorIndex::Kind::Tensor && ix.tensor().defined() && is_mask(ix.tensor())) any_mask = true;
  for (const auto& ix : indices) {
    consumed += dims_consumed(ix);
    if (ix.kind() == TensorIndex::Kind::Ellipsis) {
      GB_CHECK(!has_ellipsis, op, ": an index can only have a single ellipsis ('...')");
      has_ellipsis = true;
    }
  }
  GB_CHECK_INDEX(consumed <= self.dim(), "too many indices for tensor of dimension ", self.dim(), " (got ", consumed,
                 ")");
  Plan p;
  p.r = self;
  p.on_device = allow_device && !any_mask && composed_path(self);
  std::vector<Tensor> dev_raw;            // the device plan's index tensors, before broadcasting
  std::vector<std::vector<int64_t>> raw;  // per indexed dim, before broadcasting
  std::vector<std::vector<int64_t>> shapes;
  int64_t d = 0;
  for (const auto& ix : indices) {
    switch (ix.kind()) {
      case TensorIndex::Kind::Integer:
        p.r = p.r.select(d, ix.integer());
        break;
      case TensorIndex::Kind::Slice:
        p.r = p.r.slice(d, ix.slice().start, ix.slice().stop, ix.slice().step);
        ++d;
        break;
      case TensorIndex::Kind::None:
        p.r = p.r.unsqueeze(d);
        ++d;
        break;
      case TensorIndex::Kind::Ellipsis:
        d += self.dim() - consumed;
        break;
      case TensorIndex::Kind::Tensor: {
        const Tensor& t = ix.tensor();
        GB_CHECK_INDEX(t.defined(), op, ": an index tensor is undefined; pass a defined tensor");
        if (is_mask(t)) {
          if (t.dim() == 0) {  // x[true] adds a dim of size 1, x[false] one of size 0
            p.r = p.r.unsqueeze(d);
            bool on = shallow_alias(t).to(kCPU).to(kBool).item<bool>();
            raw.push_back(on ? std::vector<int64_t>{0} : std::vector<int64_t>{});
            shapes.push_back({int64_t(raw.back().size())});
            p.dims.push_back(d++);
            break;
          }
          for (int64_t j = 0; j < t.dim(); ++j)
            GB_CHECK_INDEX(t.size(j) == p.r.size(d + j), "The shape of the mask ", t.sizes(), " at index ", j,
                           " does not match the shape of the indexed tensor ", p.r.sizes(), " at index ", d + j);
          auto coords = true_positions(t, op);
          for (auto& c : coords) {
            shapes.push_back({int64_t(c.size())});
            raw.push_back(std::move(c));
            p.dims.push_back(d++);
          }
        } else {
          GB_CHECK_INDEX(is_integral(t.scalar_type()), "tensors used as indices must be long, int, byte or bool "
                         "tensors, got ", to_string(t.scalar_type()), "; convert it with .to(gb::kLong)");
          if (p.on_device)
            dev_raw.push_back(shallow_alias(t).to(self.device()).to(kInt64));
          else
            raw.push_back(long_values(t, op));
          shapes.push_back(t.sizes().vec());
          p.dims.push_back(d++);
        }
        break;
      }
    }
  }
  // broadcast the index tensors to one shape, then wrap each into its dim's range
  p.B = shapes.empty() ? std::vector<int64_t>{} : shapes[0];
  for (size_t k = 1; k < shapes.size(); ++k) {
    auto b = broadcast_pair(p.B, shapes[k]);
    if (!b) {
      std::string all;
      for (size_t j = 0; j < shapes.size(); ++j) all += (j ? ", " : "") + str_cat(IntArrayRef(shapes[j]));
      throw IndexError(str_cat("shape mismatch: indexing tensors could not be broadcast together with shapes ", all,
                               "; give index tensors of one shape (or shapes that broadcast)"));
    }
    p.B = *b;
  }
  const int64_t n = numel_of(p.B);
  for (size_t k = 0; k < dev_raw.size(); ++k) {  // the device plan: checked, wrapped and kept on the device
    NoGradGuard ng;
    const int64_t size = p.r.size(p.dims[k]);
    const Tensor v = dev_raw[k].expand(p.B).contiguous().reshape({-1});
    detail::run_kernel(
        v,
        [&] {  // the composed path on the cpu (a test): the host's check
          const int64_t* h = v.data_ptr<int64_t>();
          for (int64_t i = 0; i < v.numel(); ++i)
            GB_CHECK_INDEX(h[i] >= -size && h[i] < size, "index ", h[i], " is out of bounds for dimension ", p.dims[k],
                           " with size ", size);
        },
        [&] { cuda_ops::check_index_range(v, size, p.dims[k], op); });
    p.dev.push_back(where(lt(v, 0), v + size, v));
  }
  for (size_t k = 0; k < raw.size(); ++k) {
    const int64_t size = p.r.size(p.dims[k]);
    std::vector<int64_t> w(static_cast<size_t>(n));
    if (n == 0) {
      p.index.push_back(std::move(w));
      continue;
    }
    Tensor b = tensor(ArrayRef<int64_t>(raw[k]), TensorOptions().dtype(kInt64)).view(shapes[k]).expand(p.B).contiguous();
    const int64_t* v = b.data_ptr<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
      GB_CHECK_INDEX(v[i] >= -size && v[i] < size, "index ", v[i], " is out of bounds for dimension ", p.dims[k],
                     " with size ", size);
      w[i] = v[i] < 0 ? v[i] + size : v[i];
    }
    p.index.push_back(std::move(w));
  }
  p.in_place = true;
  for (size_t k = 1; k < p.dims.size(); ++k) p.in_place = p.in_place && p.dims[k] == p.dims[k - 1] + 1;
  return p;
}

// The plan's tensor with the indexed dims first and folded into one: (P, R), R the other dims' product.
struct Rows {
  Tensor front;                  // r permuted: indexed dims first (a view of self)
  std::vector<int64_t> rest;     // the other dims' sizes, in order
  int64_t P = 1;
  Tensor rows;                   // (P, rest...) over front (a view when strides allow, else a copy)
  Tensor flat;                   // (N) int64: the row of each position of B
};

Rows fold(const Plan& p) {
  Rows f;
  std::vector<int64_t> perm(p.dims.begin(), p.dims.end());
  for (int64_t d = 0; d < p.r.dim(); ++d)
    if (std::find(p.dims.begin(), p.dims.end(), d) == p.dims.end()) {
      perm.push_back(d);
      f.rest.push_back(p.r.size(d));
    }
  f.front = p.r.permute(perm);
  std::vector<int64_t> row_shape{1};
  for (int64_t d : p.dims) f.P *= p.r.size(d);
  row_shape[0] = f.P;
  row_shape.insert(row_shape.end(), f.rest.begin(), f.rest.end());
  f.rows = f.front.reshape(row_shape);
  const int64_t n = numel_of(p.B);
  if (p.on_device) {  // row-major over the indexed dims, on the device
    NoGradGuard ng;
    Tensor flat = zeros({n}, TensorOptions().dtype(kInt64).device(p.r.device()));
    for (size_t k = 0; k < p.dims.size(); ++k) flat = flat * p.r.size(p.dims[k]) + p.dev[k];
    f.flat = flat;
    return f;
  }
  std::vector<int64_t> flat(size_t(n), 0);
  for (size_t k = 0; k < p.dims.size(); ++k) {  // row-major over the indexed dims
    const int64_t size = p.r.size(p.dims[k]);
    for (int64_t i = 0; i < n; ++i) flat[i] = flat[i] * size + p.index[k][i];
  }
  f.flat = tensor(ArrayRef<int64_t>(flat), TensorOptions().dtype(kInt64)).to(p.r.device());
  return f;
}

// (B..., rest...) -> the result's order: B where the indexed dims were when they are adjacent, else first.
std::vector<int64_t> result_perm(const Plan& p, size_t nrest) {
  const int64_t nb = int64_t(p.B.size()), at = p.in_place ? p.dims[0] : 0;
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < at; ++i) perm.push_back(nb + i);
  for (int64_t i = 0; i < nb; ++i) perm.push_back(i);
  for (int64_t i = at; i < int64_t(nrest); ++i) perm.push_back(nb + i);
  return perm;
}

}  // namespace

Tensor index_with_tensors(const Tensor& self, ArrayRef<TensorIndex> indices) {
  OpScope op_scope("index", {self});
  Plan p = make_plan(self, indices, "index", /*allow_device=*/true);
  Rows f = fold(p);
  std::vector<int64_t> shape = p.B;
  shape.insert(shape.end(), f.rest.begin(), f.rest.end());
  Tensor out = f.rows.index_select(0, f.flat).view(shape).permute(result_perm(p, f.rest.size()));
  op_scope.set_output(out);
  return out;
}

void index_put_with_tensors(const Tensor& self, ArrayRef<TensorIndex> indices, const Tensor* values,
                            const Scalar* value, bool accumulate) {
  OpScope op_scope("index_put_", {self});
  Plan p = make_plan(self, indices, "index_put_");
  Rows f = fold(p);
  const int64_t n = numel_of(p.B);
  std::vector<int64_t> bshape = p.B;  // (B..., rest...)
  bshape.insert(bshape.end(), f.rest.begin(), f.rest.end());
  std::vector<int64_t> nrows{n};  // (N, rest...)
  nrows.insert(nrows.end(), f.rest.begin(), f.rest.end());
  // the values, one row per position of B, in self's dtype
  Tensor v;
  if (values != nullptr) {
    GB_CHECK(values->defined(), "index_put_: the values tensor is undefined; pass a tensor or a number");
    std::vector<int64_t> perm = result_perm(p, f.rest.size()), inverse(perm.size());
    std::vector<int64_t> want(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) want[i] = bshape[size_t(perm[i])];  // the shape index() would return
    for (size_t i = 0; i < perm.size(); ++i) inverse[size_t(perm[i])] = int64_t(i);
    Tensor vv = values->scalar_type() == self.scalar_type() ? *values : values->to(self.scalar_type());
    GB_CHECK(broadcasts_to(vv.sizes(), want), "index_put_: shape mismatch: value tensor of shape ", vv.sizes(),
             " cannot be broadcast to indexing result of shape ", IntArrayRef(want),
             "; give one value per indexed position (or a number)");
    v = vv.expand(want).permute(inverse).reshape(nrows);
  } else {
    v = full(nrows, *value, TensorOptions().dtype(self.scalar_type()).device(self.device()));
  }
  Tensor updated;
  if (accumulate) {
    std::vector<int64_t> ishape(nrows.size(), 1);
    ishape[0] = n;
    updated = f.rows.scatter_add(0, f.flat.view(ishape).expand(nrows), v);
  } else {
    // each row from the old rows or, where written, from the last value written to it (libtorch's CPU order)
    std::vector<int64_t> pick(static_cast<size_t>(f.P));
    std::iota(pick.begin(), pick.end(), int64_t(0));
    const Tensor flat = f.flat.to(kCPU);
    const int64_t* rows = flat.data_ptr<int64_t>();
    for (int64_t i = 0; i < n; ++i) pick[size_t(rows[i])] = f.P + i;
    Tensor from = tensor(ArrayRef<int64_t>(pick), TensorOptions().dtype(kInt64)).to(self.device());
    updated = cat({f.rows, v}, 0).index_select(0, from);
  }
  f.front.copy_(updated.view(f.front.sizes()));
  op_scope.set_output(self);
}

}  // namespace gb::detail
