// tests/support/op_cases.h — the op table's cases: for every op of glassbox/ops/op_table.def, inputs (shapes and
// kinds) and the gb:: computation that exercises it, free of libtorch, so that every check of an op over the table
// reads the same list:
//   tests/engine/ops/op_table_test.cpp      every op row has a case; each case on meta as on cpu (shapes, dtypes,
//                                           strides, the same allocations in the same order), forward and backward
//   tests/engine/ops/op_table_gpu_test.cpp  each case on cuda close to cpu, forward and backward (GPU tier)
//   tests/oracle/ops_oracle_test.cpp        each case against libtorch on cpu: the same computation written with
//                                           torch::, found by the case's name
// Adding an op: its row in op_table.def, a case here naming the row, the torch:: side in ops_oracle_test.cpp.
//
//   {"exp_", {"clone", "exp_"}, {in({7})}, [](G v) { return v[0].clone().exp_(); }}
//
// A case runs on the devices all of its `ops` rows list (their intersection); `kernels` names rows it reaches only
// on some device or dtype (oneDNN's and cuDNN's convolution steps): they count as covered without narrowing it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <glassbox/glassbox.h>

namespace gbtest::op_cases {

// How an input's values are drawn (floating dtypes; integer dtypes draw small integers of the same sign).
enum class Kind { Normal, Positive, Index, Bool, UnitInterval };

struct Input {
  std::vector<int64_t> shape;
  Kind kind = Kind::Normal;
  int64_t hi = 0;    // Index: values in [0, hi)
  bool grad = true;  // floating inputs: differentiate with respect to it
};

Input in(std::vector<int64_t> shape, Kind kind = Kind::Normal);
Input idx(std::vector<int64_t> shape, int64_t hi);
Input nograd(std::vector<int64_t> shape, Kind kind = Kind::Normal);

// The dtypes a case runs in (a bit set).
enum Dtypes : uint8_t {
  kFloats = 1,  // float64 and float32: forward and backward
  kHalfs = 2,   // float16 and bfloat16: forward (libtorch's side computes in float32 from the same inputs)
  kInts = 4,    // int64, int32, int16, int8, uint8: forward, exact
  kFloatsAndHalfs = kFloats | kHalfs,
  kAllDtypes = kFloats | kHalfs | kInts,
};
std::vector<gb::ScalarType> dtypes_of(uint8_t set);  // float64 first

using Inputs = const std::vector<gb::Tensor>&;

struct Case {
  std::string name;                   // unique: the oracle finds its torch:: side by it
  std::vector<std::string_view> ops;  // the op-table rows it exercises
  std::vector<Input> inputs;
  std::function<gb::Tensor(Inputs)> run;  // the inputs are on the device under test; so must be its constants
  bool backward = true;                   // also compare the inputs' gradients (floating dtypes)
  uint8_t dtypes = kFloatsAndHalfs;
  std::vector<std::string_view> kernels = {};  // rows it reaches on some device or dtype only (see above)
  bool random = false;                         // draws random numbers: shapes, dtypes and allocations, not values
};

// Every case, in the op table's order of families.
const std::vector<Case>& cases();
const Case* find_case(std::string_view name);

// The devices (gb::ops::kOnCpu | kOnMeta | kOnCuda) every one of the case's ops runs on.
uint8_t devices_of(const Case& c);

// The case's inputs in dtype dt on the cpu, the same values for the same (case, dtype) every time (the generator
// is seeded from the case's name); floating inputs with grad require grad.
std::vector<gb::Tensor> make_inputs(const Case& c, gb::ScalarType dt);

// `inputs` moved to device d (a copy on cuda, fresh storage on meta), requiring grad as they do.
std::vector<gb::Tensor> inputs_on(const std::vector<gb::Tensor>& inputs, gb::Device d);

}  // namespace gbtest::op_cases
