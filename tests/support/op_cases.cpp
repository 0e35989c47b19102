// tests/support/op_cases.cpp — the op table's cases (op_cases.h): the input builders, the joined list and the
// inputs each case runs on. The cases themselves, one function per family of op_table.def, each case naming the rows
// it exercises, are in op_cases_elementwise.cpp, op_cases_shapes.cpp and op_cases_nn.cpp; the torch:: side of each is
// in tests/oracle/ops_oracle_test.cpp, by name, in functions of the same names.
#include "support/op_cases.h"

#include <functional>
#include <string>
#include <utility>

#include "glassbox/ops/op_table.h"
#include "support/op_cases_families.h"

namespace gbtest::op_cases {

Input in(std::vector<int64_t> shape, Kind kind) { return Input{std::move(shape), kind, 0, true}; }
Input idx(std::vector<int64_t> shape, int64_t hi) { return Input{std::move(shape), Kind::Index, hi, false}; }
Input nograd(std::vector<int64_t> shape, Kind kind) { return Input{std::move(shape), kind, 0, false}; }

std::vector<gb::ScalarType> dtypes_of(uint8_t set) {
  std::vector<gb::ScalarType> out;
  if (set & kFloats) out.insert(out.end(), {gb::kFloat64, gb::kFloat32});
  if (set & kHalfs) out.insert(out.end(), {gb::kFloat16, gb::kBFloat16});
  if (set & kInts) out.insert(out.end(), {gb::kInt64, gb::kInt32, gb::kInt16, gb::kInt8, gb::kUInt8});
  return out;
}

const std::vector<Case>& cases() {
  static const std::vector<Case> all = [] {
    std::vector<Case> out;
    using namespace families;
    for (auto family : {pointwise_cases, inplace_cases, compare_cases, reduction_cases, linalg_shape_cases,
                        more_reduction_linalg_cases, nn_cases, advanced_index_cases, sort_shape_copy_cases,
                        everyday_cases, view_copy_cases, random_cases, optimizer_cases})
      for (Case& c : family()) out.push_back(std::move(c));
    return out;
  }();
  return all;
}

const Case* find_case(std::string_view name) {
  for (const Case& c : cases())
    if (c.name == name) return &c;
  return nullptr;
}

uint8_t devices_of(const Case& c) {
  uint8_t d = gb::ops::kOnCpu | gb::ops::kOnMeta | gb::ops::kOnCuda;
  for (std::string_view op : c.ops) {
    const gb::ops::OpInfo* row = gb::ops::find_op(op);
    d &= row ? row->devices : 0;  // a name that is no row: the coverage test says so
  }
  return d;
}

std::vector<gb::Tensor> make_inputs(const Case& c, gb::ScalarType dt) {
  gb::manual_seed(std::hash<std::string>{}(c.name) % 100000);
  const bool ints = !gb::is_floating_point(dt);
  const int64_t lo = dt == gb::kUInt8 ? 0 : -4;  // integer dtypes: small values, none negative for uint8
  std::vector<gb::Tensor> out;
  for (const Input& i : c.inputs) {
    gb::Tensor g;
    switch (i.kind) {
      case Kind::Normal:
        g = ints ? gb::randint(lo, 5, i.shape).to(dt) : gb::randn(i.shape, gb::kFloat64).to(dt);
        break;
      case Kind::Positive:
        g = ints ? gb::randint(1, 5, i.shape).to(dt) : (gb::rand(i.shape, gb::kFloat64) + 0.5).to(dt);
        break;
      case Kind::UnitInterval:
        g = (gb::rand(i.shape, gb::kFloat64) * 0.8 + 0.1).to(dt);
        break;
      case Kind::Index:
        g = gb::randint(0, i.hi, i.shape);
        break;
      case Kind::Bool:
        g = gb::rand(i.shape) > 0.5;
        break;
    }
    if (i.grad && g.is_floating_point()) g.requires_grad_();
    out.push_back(g);
  }
  return out;
}

std::vector<gb::Tensor> inputs_on(const std::vector<gb::Tensor>& inputs, gb::Device d) {
  std::vector<gb::Tensor> out;
  for (const gb::Tensor& t : inputs) {
    gb::Tensor m = t.detach().to(d);
    if (t.requires_grad()) m.requires_grad_();
    out.push_back(m);
  }
  return out;
}

}  // namespace gbtest::op_cases
