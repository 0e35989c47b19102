// viewer/colors.h — every colour the viewer gives a meaning to, as 0xRRGGBB, without ImGui (tests decode
// screenshots and look for these exact values).
//
// Memory categories use PyTorch's memory-timeline colours (torch.profiler._memory_profiler: darkgreen, goldenrod,
// black, mediumpurple, red, mediumblue, royalblue, grey). Span kinds use a palette that stays apart from them.
// to_imgui() turns a colour into ImGui's ABGR ImU32 (viewer/plot.h).
#pragma once

#include <cstdint>
#include <iterator>

#include "traces/records.h"

namespace gb::viewer::color {

using Rgb = std::uint32_t;  // 0xRRGGBB

// spans.kind, in SpanKind order.
constexpr Rgb kSpanKind[] = {
    0x4C8FD6,  // op               blue
    0xE0803A,  // backward_node    orange
    0xB8623A,  // backward_phase   rust
    0x5FA55A,  // module           green
    0x9C6ADE,  // optimizer        violet
    0x2BB3A3,  // dataloader       teal
    0x596270,  // step             slate
    0xB5A642,  // user             olive
    0x76B900,  // cuda_kernel      lime
    0xD9A21B,  // cuda_memcpy      amber
    0xC45C9A,  // cuda_memset      pink
    0x8088A8,  // cuda_api         lavender grey
    0x2E4A9E,  // collective       navy
};
static_assert(std::size(kSpanKind) == gb::trace::kSpanKindNames.size(), "a colour per span kind");
constexpr Rgb span_kind(gb::trace::SpanKind k) {
  return kSpanKind[static_cast<std::size_t>(k) % std::size(kSpanKind)];
}

// memory_events.category, in MemCategory order (unknown, parameter, gradient, activation, optimizer_state,
// temporary, input, autograd_detail).
constexpr Rgb kCategory[] = {0x808080, 0x006400, 0x0000CD, 0xFF0000, 0xDAA520, 0x9370DB, 0x000000, 0x4169E1};
constexpr Rgb category(gb::trace::MemCategory c) { return kCategory[static_cast<int>(c) % 8]; }
constexpr Rgb kContext = 0xB4B4B4;             // the CUDA context layer
constexpr Rgb kReservedUnallocated = 0xE2E2E2;  // held by the caching allocator, not allocated
constexpr Rgb kAllocatedLine = 0x38B6FF;  // the timeline's memory plot: allocated bytes
constexpr Rgb kReservedLine = 0xFF6FB0;   // the timeline's memory plot: reserved bytes
constexpr Rgb kPlotBackground = 0xFAFAFA;       // memory plots are drawn on white, like PyTorch's

constexpr Rgb kNaN = 0xFF00FF;  // gradient heatmap: a NaN cell (magenta, outside the viridis map)
constexpr Rgb kInf = 0xFF7F00;  // gradient heatmap: an Inf cell
constexpr Rgb kErrorBanner = 0x8B1E1E;  // the "cannot open this trace" banner
constexpr Rgb kSelection = 0xFFD400;    // outline of the selected span, cursor lines
constexpr Rgb kGraphEdge = 0x6FA8DC;    // autograd graph: an edge (gradient flow) and its arrow head
constexpr int kGraphLevels = 8;         // autograd graph: node fills are viridis quantized to this many colours
constexpr Rgb kFreeGap = 0xCFE8CF;      // segment map: free bytes inside a segment (cached, reusable)
constexpr Rgb kOom = 0xD50000;          // memory: the OOM marker
constexpr Rgb kWait = 0xD9534F;         // data loader: wait share bars
constexpr Rgb kUpdateRatio = 0x2ECC71;  // gradients: the update/parameter ratio line (skipped steps: kNaN ticks)
constexpr Rgb kCompareA = 0x7F8C8D;     // compare: trace A's bars (grey)
constexpr Rgb kCompareB = 0xE67E22;     // compare: trace B's bars (carrot)
constexpr Rgb kSearchBar = 0x5DADE2;    // timeline search: the duration histogram's bars
constexpr Rgb kCudaStreamLabel = 0xB8E986;  // timeline: the header text of a CUDA stream track (a light kernel lime)
constexpr Rgb kRankHeader = 0x34507E;  // timeline of a merged trace: the band above each rank's tracks
constexpr Rgb kLive = 0x66E666;        // "live: N steps": a trace being written, followed
constexpr Rgb kLiveEnded = 0xBFBFBF;   // "ended: exit": the followed run ended
constexpr Rgb kWriterDied = 0xFF7366;  // "the writer died (killed or crashed)"

// The Run panel (the run summary's curves over the step axis).
constexpr Rgb kRunLoss = 0x1F77B4;        // the loss curve (blue)
constexpr Rgb kRunLr = 0x2CA02C;          // the learning rate (green)
constexpr Rgb kRunThroughput = 0x17BECF;  // samples/s or tokens/s (cyan)
constexpr Rgb kRunGradNorm = 0x8C564B;    // the global gradient norm (brown)
constexpr Rgb kRunStepMax = 0xC8C8C8;     // step time: the largest step of each pixel column, over the stacked means
// step time split, in the timeline's colours of the spans that make each part: data (the DataLoader wait),
// forward (ops), backward (backward nodes), optimizer
constexpr Rgb kRunPhase[] = {0x2BB3A3, 0x4C8FD6, 0xE0803A, 0x9C6ADE};
constexpr Rgb kSeverity[] = {0x99BFFF, 0xFFCC4D, 0xFF5959};  // anomaly markers: info, warning, error
constexpr Rgb kCauseLink = 0x4DD0E1;  // anomalies: a chain's link ("->" and "because: <evidence>"), "root cause of N"
constexpr Rgb kDetailWindow = 0x6C8EBF;                      // a detail window the policy wrote (first, periodic, full)
constexpr Rgb kDetailRecorder =
    0xD35FB7;  // a detail window the flight recorder wrote (anomaly, oom, exception, signal, end)

// Viridis, 0 (dark purple) .. 1 (yellow), for log-scaled heatmaps.
Rgb viridis(double t);

}  // namespace gb::viewer::color
