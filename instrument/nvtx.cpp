// instrument/nvtx.cpp — every span as an NVTX range, so an Nsight Systems capture of a glassbox program shows our
// names (ops, autograd nodes, modules, steps, DataLoader stages) on its timeline (contract in probe.h).
//
// On when an NVTX tool is attached at start-up: NVTX_INJECTION64_PATH is what Nsight Systems (and any NVTX tool)
// sets for the process it profiles; GLASSBOX_NVTX=1 forces it on (a tool pre-injected another way), GLASSBOX_NVTX=0
// off. Ranges go to the domain "glassbox", one category per span kind (op, backward_node, ...), a colour per kind,
// and their names are registered strings: registered once per name and thread, then passed as a handle, so a
// range costs the tool's push and pop and no string copy. Without an attached tool this file does nothing: NVTX3 is
// header-only and its calls are no-ops until a tool loads, and glassbox does not even make them (probe.h's sink
// flag). Built without the CUDA toolkit (no nvtx3 headers), the functions are empty and the flag is never set.
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>

#include "instrument/probe.h"

#if GLASSBOX_WITH_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

namespace gb::trace::detail {

#if GLASSBOX_WITH_NVTX

namespace {

bool wanted() {
  if (const char* v = std::getenv("GLASSBOX_NVTX"); v && *v) return std::strcmp(v, "0") != 0;
  const char* tool = std::getenv("NVTX_INJECTION64_PATH");
  return tool && *tool;
}


// ARGB per kind, the viewer's legend colours (viewer/colors.h) where it has them.
std::uint32_t kind_color(SpanKind k) {
  switch (k) {
    case SpanKind::op: return 0xff4a90d9;
    case SpanKind::backward_node: return 0xffe8833a;
    case SpanKind::backward_phase: return 0xffc0603a;
    case SpanKind::module: return 0xff5cb85c;
    case SpanKind::optimizer: return 0xff9b6ad6;
    case SpanKind::dataloader: return 0xff2aa198;
    case SpanKind::step: return 0xff6c7580;
    default: return 0xff9e9e9e;
  }
}

nvtxDomainHandle_t domain() {
  static const nvtxDomainHandle_t d = [] {
    nvtxDomainHandle_t h = nvtxDomainCreateA("glassbox");
    for (std::size_t k = 0; k < kSpanKindNames.size(); ++k)  // category k + 1 is span kind k ("op", ...)
      nvtxDomainNameCategoryA(h, static_cast<std::uint32_t>(k + 1), std::string(kSpanKindNames[k]).c_str());
    return h;
  }();
  return d;
}

// Registered names, per thread (no lock on the hot path; a name registered by two threads gets two handles, which
// tools accept: the string is the same).
thread_local std::unordered_map<const SourceLocation*, nvtxStringHandle_t>* t_names = nullptr;

nvtxStringHandle_t name_of(const SourceLocation* loc) {
  if (!t_names) t_names = new std::unordered_map<const SourceLocation*, nvtxStringHandle_t>();  // kept to exit
  nvtxStringHandle_t& h = (*t_names)[loc];
  if (!h) h = nvtxDomainRegisterStringA(domain(), loc->name);
  return h;
}

const bool g_nvtx_at_start = [] {
  if (wanted()) g_span_sinks.fetch_or(kNvtxSpans, std::memory_order_release);
  return true;
}();

}  // namespace

void nvtx_push(const SourceLocation* loc) noexcept {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.category = static_cast<std::uint32_t>(loc->kind) + 1;
  a.colorType = NVTX_COLOR_ARGB;
  a.color = kind_color(loc->kind);
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = name_of(loc);
  nvtxDomainRangePushEx(domain(), &a);
}

void nvtx_pop() noexcept { nvtxDomainRangePop(domain()); }

#else  // no nvtx3 headers in this build: spans never become NVTX ranges

void nvtx_push(const SourceLocation*) noexcept {}
void nvtx_pop() noexcept {}

#endif

}  // namespace gb::trace::detail
