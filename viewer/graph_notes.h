// viewer/graph_notes.h — the autograd graph panel's teaching lines: for a backward node's name (PyTorch's names:
// MulBackward0, AddmmBackward0, ...), what its forward saved for the backward pass and why. One table, no ImGui.
//
//   graph_note("ReluBackward0") -> "saves its output: relu's gradient is grad * (output > 0)"
#pragma once

#include <string_view>

namespace gb::viewer {

// "" when the node is not in the table.
std::string_view graph_note(std::string_view node_name);

}  // namespace gb::viewer
