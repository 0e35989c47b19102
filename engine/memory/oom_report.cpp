// engine/memory/oom_report.cpp — what an OOM says: PyTorch's first lines, then the layers that held the memory,
// the memory by the step that allocated it, the largest live blocks, and next steps computed from the numbers: a
// leak across steps or one step's peak (glassbox/memory/oom.h).
#include <algorithm>
#include <map>
#include <cmath>
#include <sstream>

#include "memory/allocator_state.h"

namespace gb {
namespace {

using memory::Category;
using memory::format_size;

std::string device_noun(const Device& d) {  // "CPU out of memory" / "CUDA out of memory" / "Meta out of memory"
  return d.is_cuda() ? "CUDA" : d.is_meta() ? "Meta" : "CPU";
}
std::string device_phrase(const Device& d) {  // PyTorch says "GPU 0"
  return d.is_cuda() ? detail::str_cat("GPU ", std::max<int>(d.index(), 0)) : "Device " + d.str();
}
int percent(int64_t part, int64_t whole) { return whole > 0 ? int(std::lround(100.0 * double(part) / double(whole))) : 0; }

// "activations are ", "optimizer state is ", ...
const char* category_subject(Category c) {
  switch (c) {
    case Category::activation: return "activations are ";
    case Category::parameter: return "parameters are ";
    case Category::gradient: return "gradients are ";
    case Category::optimizer_state: return "optimizer state is ";
    case Category::temporary: return "temporaries are ";
    case Category::input: return "inputs are ";
    case Category::autograd_detail: return "autograd bookkeeping is ";
    case Category::unknown: return "untagged allocations are ";
  }
  return "";
}

// What to do about one category that holds a large share of the allocated memory.
std::string category_advice(Category c, int64_t bytes) {
  const std::string n = format_size(bytes);
  switch (c) {
    case Category::activation:
      return "activation checkpointing or a smaller batch would free up to " + n;
    case Category::parameter:
      return "a smaller model, or bfloat16/float16 parameters (half of " + n + ")";
    case Category::gradient:
      return "gradients can be dropped between steps (zero_grad with set_to_none) or accumulated over smaller "
             "micro-batches; they hold " + n;
    case Category::optimizer_state:
      return "an optimizer with less state (SGD without momentum holds none; Adam holds two tensors per parameter) "
             "would free up to " + n;
    case Category::temporary:
      return "release intermediate results sooner (drop references, use in-place ops), or run under "
             "gb::NoGradGuard when no gradients are needed; they hold " + n;
    case Category::input:
      return "a smaller batch would shrink the " + n + " of inputs";
    case Category::autograd_detail:
      return "the autograd graph's bookkeeping holds " + n + ": free graphs you no longer need (no retain_graph)";
    case Category::unknown:
      return n + " is untagged: tag allocations with gb::memory::CategoryGuard to see what they are";
  }
  return "";
}

}  // namespace

std::string OomReport::message() const {
  std::ostringstream os;
  const int64_t unallocated = reserved - allocated;
  const int64_t suggested_split_mb = std::max<int64_t>(21, (requested >> 20));
  os << device_noun(device) << " out of memory. Tried to allocate " << format_size(alloc_size) << ". ";
  if (capacity > 0)
    os << device_phrase(device) << " has a total capacity of " << format_size(capacity) << " of which "
       << format_size(free) << " is free. ";
  else
    os << device_phrase(device) << " has no capacity limit set, and the device itself refused the segment. ";
  os << "Of the allocated memory " << format_size(allocated) << " is allocated by glassbox, and "
     << format_size(unallocated) << " is reserved by glassbox but unallocated. If reserved but unallocated memory "
     << "is large try setting GLASSBOX_ALLOC_CONF=max_split_size_mb:" << suggested_split_mb
     << " to avoid fragmentation.\n";

  os << "\nRequested " << format_size(requested) << " (" << requested << " bytes), rounded to a "
     << format_size(memory::round_size(requested)) << " block that needs a new " << format_size(alloc_size)
     << " segment.\n";
  os << "Memory on " << device.str() << " when it failed:\n";
  char line[256];
  std::snprintf(line, sizeof line, "  %-26s %12s\n", "device context", format_size(context).c_str());
  os << line;
  std::snprintf(line, sizeof line, "  %-26s %12s   largest free block %s, fragmentation %.2f\n",
                "reserved but unallocated", format_size(unallocated).c_str(), format_size(largest_free_block).c_str(),
                fragmentation);
  os << line;
  std::snprintf(line, sizeof line, "  %-26s %12s\n", "allocated", format_size(allocated).c_str());
  os << line;
  std::vector<int> order;
  for (int c = 0; c < memory::kNumCategories; ++c)
    if (allocated_by_category[size_t(c)] > 0) order.push_back(c);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return allocated_by_category[size_t(a)] > allocated_by_category[size_t(b)]; });
  for (int c : order) {
    int64_t bytes = allocated_by_category[size_t(c)];
    std::snprintf(line, sizeof line, "    %-24s %12s  %3d%%\n", to_string(Category(c)), format_size(bytes).c_str(),
                  percent(bytes, allocated));
    os << line;
  }
  if (capacity > 0) {
    std::snprintf(line, sizeof line, "  %-26s %12s\n", "free", format_size(free).c_str());
    os << line;
  }
  if (by_age.step >= 0) {  // a step was running: what it allocated against what earlier steps left alive
    os << "Live memory by the step that allocated it (step " << by_age.step << " ran out):\n";
    for (memory::Age a : {memory::Age::this_step, memory::Age::earlier_steps, memory::Age::outside_steps}) {
      const int64_t bytes = by_age.total(a);
      std::snprintf(line, sizeof line, "  %-26s %12s  %3d%%", to_string(a), format_size(bytes).c_str(),
                    percent(bytes, allocated));
      os << line;
      if (bytes > 0) os << "   " << memory::categories_text(by_age.bytes[size_t(a)]);
      os << "\n";
    }
    if (by_age.kept > 0) {
      std::snprintf(line, sizeof line, "  %-26s %12s  %3d%%", "kept across steps", format_size(by_age.kept).c_str(),
                    percent(by_age.kept, allocated));
      os << line << "   what earlier steps allocated and a step frees (activations, temporaries, inputs, autograd)"
         << "\n";
    }
  }

  if (!largest_allocations.empty()) {
    os << "Largest live allocations:\n";
    for (size_t i = 0; i < largest_allocations.size(); ++i) {
      const LiveAllocation& a = largest_allocations[i];
      std::snprintf(line, sizeof line, "  %zu. %12s  %-16s", i + 1, format_size(a.size).c_str(), to_string(a.category));
      os << line << " op " << (a.op.empty() ? "?" : a.op) << ", module " << (a.module.empty() ? "?" : a.module);
      if (a.stream != 0) os << ", stream " << a.stream;
      os << "\n";
    }
  }

  os << "What to do:\n";
  const int64_t usable = capacity > 0 ? capacity - context : 0;
  if (capacity > 0 && alloc_size > usable) {
    os << "  - this one request needs " << format_size(alloc_size) << " but the device has only " << format_size(usable)
       << " after its context: no amount of freeing helps; split the work (a smaller batch, or the op in chunks)\n";
  }
  const bool leak = by_age.leak();
  if (leak) {
    os << "  - a leak across steps, not this step's peak: " << memory::kept_text(by_age, 0)
       << ". The tensors that hold it were made by:\n";
    for (const memory::KeptOrigin& o : by_age.kept_origins) os << "      " << memory::to_string(o) << "\n";
    os << "    the program keeps every step's tensors alive, with their graphs: keep loss.item() (a number) rather "
          "than the loss, .detach() the outputs you store, run evaluation under gb::NoGradGuard, and do not append "
          "outputs to a list that outlives the step; activation checkpointing or a smaller batch would only delay "
          "this by a few steps\n";
  } else if (by_age.step >= 0 && percent(by_age.kept, allocated) >= 25) {
    os << "  - " << memory::kept_text(by_age, 2)
       << " is still alive: if it grows step after step it is a leak (keep loss.item(), .detach() what you store, "
          "evaluate under gb::NoGradGuard)\n";
  }
  for (int c : order) {
    const int64_t bytes = allocated_by_category[size_t(c)];
    if (percent(bytes, allocated) < 25) continue;
    if (leak && memory::step_owned(Category(c))) continue;  // earlier steps' tensors: no step's peak to shrink
    os << "  - " << category_subject(Category(c)) << percent(bytes, allocated)
       << "% of allocated memory: " << category_advice(Category(c), bytes) << "\n";
    if (Category(c) == Category::activation && !activations_by_module.empty()) {
      int64_t top = 0;
      os << "    the modules holding the most: ";
      for (size_t i = 0; i < activations_by_module.size(); ++i) {
        os << (i ? ", " : "") << activations_by_module[i].first << " (" << format_size(activations_by_module[i].second)
           << ")";
        top += activations_by_module[i].second;
      }
      os << "; checkpointing them would free about " << format_size(top) << "\n";
    }
  }
  // Fragmentation is the cause when the cache holds enough free bytes in total but no block big enough.
  const int64_t block = memory::round_size(requested);
  if (unallocated >= block && largest_free_block < block) {
    char frag[16];
    std::snprintf(frag, sizeof frag, "%.2f", fragmentation);
    os << "  - fragmentation " << frag << ": " << format_size(unallocated) << " is cached, enough for this request, "
       << "but in pieces (the largest is " << format_size(largest_free_block) << ") between live blocks; freeing "
       << "those blocks merges the pieces, and GLASSBOX_ALLOC_CONF=max_split_size_mb:" << suggested_split_mb
       << " keeps large cached blocks whole for large requests\n";
  } else if (unallocated > 0) {
    os << "  - " << format_size(unallocated) << " is reserved but unallocated, in segments that still hold live "
       << "blocks (the retry already returned every whole free segment, as empty_cache() does)\n";
  }
  os << "  - free the tensors you no longer need (drop their last reference) and retry; "
     << "gb::memory::summary(gb::Device(\"" << device.str() << "\")) prints the allocator's table and "
     << "gb::memory::snapshot() every block";
  return os.str();
}

namespace memory {

OomReport CachingAllocator::Impl::oom_report_locked(int64_t nbytes, int64_t alloc_size, int64_t step) const {
  OomReport r;
  r.device = device;
  r.requested = nbytes;
  r.alloc_size = alloc_size;
  r.context = raw->context_bytes();
  r.capacity = capacity ? capacity : raw->total_bytes();
  r.allocated = stats.allocated_bytes[kAll].current;
  r.reserved = stats.reserved_bytes[kAll].current;
  r.free = r.capacity > 0 ? std::max<int64_t>(0, r.capacity - r.context - r.reserved) : 0;
  r.max_split_size = max_split;
  for (const detail::Pool* pool : {&small_pool, &large_pool})
    for (const detail::Block* b : *pool) r.largest_free_block = std::max(r.largest_free_block, b->size);
  const int64_t unallocated = r.reserved - r.allocated;
  r.fragmentation = unallocated > 0 ? 1.0 - double(r.largest_free_block) / double(unallocated) : 0.0;
  for (int c = 0; c < kNumCategories; ++c) r.allocated_by_category[size_t(c)] = stats.allocated_bytes_by_category[size_t(c)].current;
  std::vector<const detail::Block*> live;
  std::map<uint32_t, int64_t> activation_by_module;  // module name id -> live activation bytes
  for (const auto& [id, seg] : segments)
    for (const detail::Block* b = seg->head; b; b = b->next)
      if (b->allocated) {
        live.push_back(b);
        if (b->category == Category::activation && b->module != 0) activation_by_module[b->module] += b->size;
      }
  for (const auto& [module, bytes] : activation_by_module) r.activations_by_module.emplace_back(name_of(module), bytes);
  std::stable_sort(r.activations_by_module.begin(), r.activations_by_module.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  if (r.activations_by_module.size() > 3) r.activations_by_module.resize(3);
  const size_t top = std::min<size_t>(5, live.size());
  std::partial_sort(live.begin(), live.begin() + ptrdiff_t(top), live.end(), [](const detail::Block* a, const detail::Block* b) {
    if (a->size != b->size) return a->size > b->size;
    return a->segment->id != b->segment->id ? a->segment->id < b->segment->id : a->offset < b->offset;
  });
  for (size_t i = 0; i < top; ++i) {
    const detail::Block* b = live[i];
    r.largest_allocations.push_back(
        LiveAllocation{b->addr(), b->size, b->requested, b->segment->stream, b->category, name_of(b->op), name_of(b->module)});
  }
  r.by_age = memory_by_age(snapshot_locked(), step);
  return r;
}

}  // namespace memory
}  // namespace gb
