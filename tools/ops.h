// tools/ops.h — `glassbox ops`: the engine's op table (engine/include/glassbox/ops/op_table.def) as text: one line per
// op with its backward node(s), the devices it runs on, its autocast policy and its CUDA pointwise code; or, with
// markdown, the table the docs carry between their `<!-- ops:begin -->` markers (tools/docs_ops.sh writes it there).
// Reads the header-only table: the glassbox command does not link the engine.
#pragma once

#include <string>

namespace gb::tools {

enum class OpsFormat { text, markdown };

std::string ops_table(OpsFormat format);

}  // namespace gb::tools
