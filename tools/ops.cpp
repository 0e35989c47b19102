// tools/ops.cpp — `glassbox ops` (tools/ops.h).
#include "tools/ops.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "engine/include/glassbox/ops/op_table.h"

namespace gb::tools {

namespace {
std::string dash(std::string_view s) { return s.empty() || s == "none" ? "-" : std::string(s); }
}  // namespace

std::string ops_table(OpsFormat format) {
  std::ostringstream o;
  size_t ops = 0, cuda = 0;
  for (const gb::ops::OpInfo& op : gb::ops::op_table()) {
    if (op.node_only) continue;
    ++ops;
    if (op.devices & gb::ops::kOnCuda) ++cuda;
  }
  if (format == OpsFormat::markdown) {
    o << "| op | backward node | devices | autocast | CUDA pointwise code |\n";
    o << "|---|---|---|---|---|\n";
    for (const gb::ops::OpInfo& op : gb::ops::op_table()) {
      if (op.node_only) continue;
      o << "| `" << op.name << "` | " << dash(op.nodes) << " | " << gb::ops::device_list(op.devices) << " | "
        << dash(op.autocast) << " | " << dash(op.pw) << " |\n";
    }
    o << "\n" << ops << " ops, " << cuda << " with a CUDA path (`glassbox ops --format markdown`).\n";
    return o.str();
  }
  size_t w = 2, wn = 4;
  for (const gb::ops::OpInfo& op : gb::ops::op_table()) {
    w = std::max(w, op.name.size());
    wn = std::max(wn, dash(op.nodes).size());
  }
  char line[512];
  std::snprintf(line, sizeof line, "%-*s  %-*s  %-13s  %-18s  %s\n", int(w), "op", int(wn), "node", "devices",
                "autocast", "pointwise");
  o << line;
  for (const gb::ops::OpInfo& op : gb::ops::op_table()) {
    if (op.node_only) continue;
    std::snprintf(line, sizeof line, "%-*s  %-*s  %-13s  %-18s  %s\n", int(w), std::string(op.name).c_str(), int(wn),
                  dash(op.nodes).c_str(), std::string(gb::ops::device_list(op.devices)).c_str(),
                  dash(op.autocast).c_str(), dash(op.pw).c_str());
    o << line;
  }
  o << ops << " ops, " << cuda << " with a CUDA path\n";
  return o.str();
}

}  // namespace gb::tools
