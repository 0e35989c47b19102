// glassbox/ops/op_table.h — the one table of glassbox's ops: each op's trace name, its backward node(s), the devices
// it runs on, its autocast policy, its CUDA pointwise code and where its kernels are. The rows are
// glassbox/ops/op_table.def (an X-macro); this header turns them into a constexpr array.
//
//   const gb::ops::OpInfo* op = gb::ops::find_op("mm");   // op->nodes == "MmBackward0", op->devices has cuda
//   for (const gb::ops::OpInfo& op : gb::ops::op_table()) ...
//
// Header-only and free of the engine's types, so code that does not link the engine (the `glassbox` command) reads
// the same table. What checks it: tests/engine/ops/op_table_test.cpp (every OpScope and Node name in the sources is
// a row; the GB_AUTOCAST sites, launch.cpp's pw_for_name, the viewer's graph notes agree with it), tests/tools/
// ops_test.cpp (`glassbox ops`), and the docs' generated table (tools/docs_ops.sh --check).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace gb::ops {

enum : uint8_t { kOnCpu = 1, kOnMeta = 2, kOnCuda = 4 };

namespace op_table_detail {
inline constexpr uint8_t cpu_meta_cuda = kOnCpu | kOnMeta | kOnCuda;
inline constexpr uint8_t cpu_meta = kOnCpu | kOnMeta;
inline constexpr uint8_t cpu_cuda = kOnCpu | kOnCuda;
inline constexpr uint8_t cuda_only = kOnCuda;
}  // namespace op_table_detail

struct OpInfo {
  std::string_view name;      // the OpScope name a trace records; a node-only row: the Node name
  std::string_view nodes;     // the Node names it records, space-separated; "" = none
  uint8_t devices = 0;        // kOnCpu | kOnMeta | kOnCuda
  std::string_view autocast;  // "lower_precision_fp", "fp32", "promote" or "none"
  std::string_view pw;        // its code in engine/cuda/pointwise_ops.h (Pw::...), or "none"
  bool pw_by_name = false;    // cuda_pointwise finds pw from the name (pw_for_name)
  std::string_view files;     // where its kernels are, relative to engine/, space-separated
  bool node_only = false;     // a node no op records (AccumulateGrad, CopySlices, ...)
};

inline constexpr auto kOpTable = std::to_array<OpInfo>({
#define GB_OP(name, nodes, devices, autocast, pw, by_name, files) \
  OpInfo{name, nodes, op_table_detail::devices, #autocast, #pw, (by_name) != 0, files, false},
#define GB_NODE(name, files) OpInfo{name, name, 0, "none", "none", false, files, true},
#include "op_table.def"  // next to this header: usable without engine/include on the path
#undef GB_OP
#undef GB_NODE
});

constexpr const auto& op_table() { return kOpTable; }

// The row of an op (by its OpScope name), or nullptr. Node-only rows are not ops.
constexpr const OpInfo* find_op(std::string_view name) {
  for (const OpInfo& op : kOpTable)
    if (!op.node_only && op.name == name) return &op;
  return nullptr;
}

// True when `nodes` (a row's space-separated list) holds `node`.
constexpr bool lists_node(std::string_view nodes, std::string_view node) {
  while (!nodes.empty()) {
    const size_t sp = nodes.find(' ');
    if (nodes.substr(0, sp) == node) return true;
    if (sp == std::string_view::npos) break;
    nodes.remove_prefix(sp + 1);
  }
  return false;
}

// The first row that records `node` (op or node-only), or nullptr.
constexpr const OpInfo* find_node(std::string_view node) {
  for (const OpInfo& op : kOpTable)
    if (lists_node(op.nodes, node)) return &op;
  return nullptr;
}

// "cpu,meta,cuda": the devices as `glassbox ops` prints them.
constexpr std::string_view device_list(uint8_t d) {
  switch (d) {
    case kOnCpu | kOnMeta | kOnCuda: return "cpu,meta,cuda";
    case kOnCpu | kOnMeta: return "cpu,meta";
    case kOnCpu | kOnCuda: return "cpu,cuda";
    case kOnCuda: return "cuda";
    default: return "";
  }
}

}  // namespace gb::ops
