// traces/records.h — one plain struct per table of the trace file, and the enums stored as small integers.
//
// These are the rows the Writer takes and the Reader gives back; traces/SCHEMA.md documents each column, unit and
// enum value. Times are int64 nanoseconds since the trace start. Ids are chosen by the writer's caller (the
// collector numbers spans before they end, so a child can name its parent). std::nullopt is stored as SQL NULL.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace gb::trace {

using Id = std::int64_t;
using OptId = std::optional<std::int64_t>;

// The enums below are stored as small integers; each has its names, in value order, in one table beside it (the
// schema's name(), the glassbox command and the viewer all print these; the engine's own enums that are written
// as these assert, where they are cast, that their values agree).

// spans.kind
enum class SpanKind : int {
  op = 0, backward_node = 1, backward_phase = 2, module = 3, optimizer = 4, dataloader = 5, step = 6, user = 7,
  cuda_kernel = 8, cuda_memcpy = 9, cuda_memset = 10, cuda_api = 11, collective = 12,
};
inline constexpr std::array<std::string_view, 13> kSpanKindNames = {
    "op",   "backward_node", "backward_phase", "module",      "optimizer",   "dataloader", "step",
    "user", "cuda_kernel",   "cuda_memcpy",    "cuda_memset", "cuda_api",    "collective"};
// threads.role (communication from schema version 4)
enum class ThreadRole : int {
  main = 0, dataloader_worker = 1, pin_memory = 2, collector = 3, cuda_stream = 4, other = 5, communication = 6
};
inline constexpr std::array<std::string_view, 7> kThreadRoleNames = {
    "main", "dataloader_worker", "pin_memory", "collector", "cuda_stream", "other", "communication"};
// memory_events.action — append only (7..9 from schema version 5: detail that resumes after a gap says which
// blocks and segments were live then, so a replay from there is exact).
enum class MemAction : int {
  alloc = 0, free = 1, segment_alloc = 2, segment_free = 3, oom = 4, empty_cache = 5, retag = 6, resume = 7,
  live = 8, live_segment = 9,
};
inline constexpr std::array<std::string_view, 10> kMemActionNames = {
    "alloc", "free", "segment_alloc", "segment_free", "oom", "empty_cache", "retag", "resume", "live", "live_segment"};
// memory_events.category
enum class MemCategory : int {
  unknown = 0, parameter = 1, gradient = 2, activation = 3, optimizer_state = 4, temporary = 5, input = 6,
  autograd_detail = 7,
};
inline constexpr std::array<std::string_view, 8> kMemCategoryNames = {
    "unknown", "parameter", "gradient", "activation", "optimizer_state", "temporary", "input", "autograd_detail"};
constexpr int kMemCategories = static_cast<int>(kMemCategoryNames.size());
// params.dtype — the engine's ScalarType order (glassbox/core/dtype.h); append only (7..9: uint8, int8, int16,
// from schema version 3).
enum class DType : int {
  bool_ = 0, int32 = 1, int64 = 2, float16 = 3, bfloat16 = 4, float32 = 5, float64 = 6, uint8 = 7, int8 = 8, int16 = 9
};
inline constexpr std::array<std::string_view, 10> kDTypeNames = {"bool",    "int32",   "int64", "float16", "bfloat16",
                                                                 "float32", "float64", "uint8", "int8",    "int16"};
// anomalies.kind — append only: the numbers are stored in files (schema version 2 added 7..11).
enum class AnomalyKind : int {
  nonfinite_forward = 0, nonfinite_backward = 1, exploding_norm = 2, vanishing_norm = 3, loss_spike = 4,
  amp_skipped_step = 5, memory_growth = 6, nonfinite_loss = 7, update_ratio = 8, dead_relu = 9,
  amp_scale_collapse = 10, missing_zero_grad = 11, depth_gradient = 12, no_gradient = 13,
};
inline constexpr std::array<std::string_view, 14> kAnomalyKindNames = {
    "nonfinite_forward",  "nonfinite_backward", "exploding_norm", "vanishing_norm", "loss_spike",
    "amp_skipped_step",   "memory_growth",      "nonfinite_loss", "update_ratio",   "dead_relu",
    "amp_scale_collapse", "missing_zero_grad",  "depth_gradient", "no_gradient"};
constexpr int kAnomalyKinds = static_cast<int>(kAnomalyKindNames.size());
// anomalies.severity
enum class Severity : int { info = 0, warning = 1, error = 2 };
inline constexpr std::array<std::string_view, 3> kSeverityNames = {"info", "warning", "error"};
// detail_windows.reason (schema version 5): why the steps of a window have full detail. first: the run's first
// steps; periodic: a window every N steps; full: every step (detail policy "full"); the others are the flight
// recorder's last steps, written when an anomaly fired, at an out-of-memory error, an uncaught exception, a signal,
// or the end of the run.
enum class DetailReason : int { first = 0, periodic = 1, full = 2, anomaly = 3, oom = 4, exception = 5, signal = 6, end = 7 };
inline constexpr std::array<std::string_view, 8> kDetailReasonNames = {"first", "periodic",  "full",   "anomaly",
                                                                       "oom",   "exception", "signal", "end"};

// Each table names every value: the last enumerator is the table's last entry.
static_assert(kSpanKindNames.size() == static_cast<std::size_t>(SpanKind::collective) + 1);
static_assert(kThreadRoleNames.size() == static_cast<std::size_t>(ThreadRole::communication) + 1);
static_assert(kMemActionNames.size() == static_cast<std::size_t>(MemAction::live_segment) + 1);
static_assert(kMemCategoryNames.size() == static_cast<std::size_t>(MemCategory::autograd_detail) + 1);
static_assert(kDTypeNames.size() == static_cast<std::size_t>(DType::int16) + 1);
static_assert(kAnomalyKindNames.size() == static_cast<std::size_t>(AnomalyKind::no_gradient) + 1);
static_assert(kSeverityNames.size() == static_cast<std::size_t>(Severity::error) + 1);
static_assert(kDetailReasonNames.size() == static_cast<std::size_t>(DetailReason::end) + 1);

// Devices are integers everywhere: -1 is the CPU, -2 the meta device, n >= 0 is cuda:n.
constexpr int kCpu = -1;
constexpr int kMeta = -2;

struct ThreadRecord {
  Id id = 0;
  std::int64_t os_tid = 0;
  std::string name;
  ThreadRole role = ThreadRole::main;
  OptId rank;  // the rank whose thread this was, in a trace `glassbox merge` wrote; NULL in one process's trace
  bool operator==(const ThreadRecord&) const = default;
};

// Span ids carry their thread: id = thread_id << 32 | n, where n counts the thread's spans in the order they
// began (so within one thread, id order is start order; the Reader's time-window query relies on it).
constexpr int kSpanIdThreadShift = 32;
constexpr Id span_id(Id thread_id, std::int64_t n) { return (thread_id << kSpanIdThreadShift) | n; }
constexpr Id span_thread(Id span) { return span >> kSpanIdThreadShift; }

struct SpanRecord {
  Id id = 0;         // span_id(thread_id, n)
  SpanKind kind = SpanKind::op;
  Id name_id = 0;    // strings.id
  Id thread_id = 0;  // threads.id
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  OptId step;        // steps.step, when inside a training step
  OptId parent_id;   // spans.id of the enclosing span on the same thread
  OptId seq;         // autograd sequence number (links forward op and backward node)
  OptId module_id;   // modules.id
  bool operator==(const SpanRecord&) const = default;
};

// A point in time on one thread (GB_TRACE_INSTANT): exported as a Chrome "i" event.
struct InstantRecord {
  Id id = 0;
  std::int64_t t_ns = 0;
  Id name_id = 0;    // strings.id
  Id thread_id = 0;  // threads.id
  OptId span_id;     // the innermost open span of the thread, if any
  OptId step;
  bool operator==(const InstantRecord&) const = default;
};

struct OpDetailsRecord {
  Id span_id = 0;
  OptId input_shapes;  // strings.id of e.g. "[[64, 784], [784, 128]]"
  OptId dtypes;        // strings.id of e.g. "float32,float32"
  int device = kCpu;
  std::optional<std::int64_t> flops;
  std::optional<std::int64_t> bytes;
  bool operator==(const OpDetailsRecord&) const = default;
};

struct ModuleRecord {
  Id id = 0;
  std::string path;  // "encoder.layers.0.fc1"; "" for the root module
  std::string type;  // "Linear"
  OptId parent_id;
  bool operator==(const ModuleRecord&) const = default;
};

struct ParamRecord {
  Id id = 0;
  Id module_id = 0;
  std::string name;   // "weight"
  std::string shape;  // "[128, 784]"
  std::int64_t numel = 0;
  DType dtype = DType::float32;
  bool operator==(const ParamRecord&) const = default;
};

// One training step: the run summary, written for every step whatever the detail (schema version 5 added the
// columns after `skipped`; NULL where not measured).
struct StepRecord {
  std::int64_t step = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::optional<double> loss{};
  std::optional<double> lr{};
  std::optional<double> grad_scale{};
  bool skipped = false;
  // Where the step's time went: waiting for the DataLoader, backward(), optimizer.step(), and the rest (the forward
  // pass, the loss and the loop's own code), which is forward_ns = (end_ns - start_ns) - the other three.
  std::optional<std::int64_t> data_ns{}, forward_ns{}, backward_ns{}, optimizer_ns{};
  std::optional<std::int64_t> samples{}, tokens{};  // the step's batch, where the loop (or its DataLoader) said
  std::optional<double> grad_norm{};                // L2 norm of every gradient the optimizer step used
  bool operator==(const StepRecord&) const = default;
};

// One device's memory during one step (schema version 5): peaks since the previous step's end, and the totals at
// this step's end. Written for every step and device the step allocated on, whatever the detail.
struct StepMemoryRecord {
  std::int64_t step = 0;
  int device = kCpu;
  std::int64_t allocated_peak = 0, reserved_peak = 0;  // bytes
  std::int64_t allocated_end = 0, reserved_end = 0;    // bytes
  // the peak of each category's allocated bytes during the step (MemCategory order)
  std::int64_t unknown_peak = 0, parameter_peak = 0, gradient_peak = 0, activation_peak = 0,
               optimizer_state_peak = 0, temporary_peak = 0, input_peak = 0, autograd_detail_peak = 0;
  bool operator==(const StepMemoryRecord&) const = default;
};

// Steps whose detail (spans, memory events, op_details, instants, counters) the trace holds (schema version 5).
// Steps outside every window have their summary only (steps, step_memory, anomalies, and grad_stats / graphs when
// those were due).
struct DetailWindowRecord {
  Id id = 0;
  std::int64_t first_step = 0, last_step = 0;  // inclusive
  std::int64_t start_ns = 0, end_ns = 0;       // the time the window's rows cover
  DetailReason reason = DetailReason::first;
  bool operator==(const DetailWindowRecord&) const = default;
};

struct GraphNodeRecord {
  Id id = 0;
  std::int64_t step = 0;
  std::int64_t seq = 0;
  Id name_id = 0;
  OptId forward_span_id;
  OptId module_id;
  std::int64_t saved_bytes = 0;
  bool operator==(const GraphNodeRecord&) const = default;
};

struct GraphEdgeRecord {
  std::int64_t step = 0;
  Id src_node_id = 0;
  Id dst_node_id = 0;
  std::int64_t input_nr = 0;
  bool operator==(const GraphEdgeRecord&) const = default;
};

struct MemoryEventRecord {
  Id id = 0;
  std::int64_t t_ns = 0;
  MemAction action = MemAction::alloc;
  int device = kCpu;
  std::int64_t addr = 0;
  std::int64_t size = 0;       // bytes
  std::int64_t requested = 0;  // bytes the caller asked for (size is after rounding)
  OptId segment_id;
  std::int64_t stream = 0;
  MemCategory category = MemCategory::unknown;
  OptId span_id;
  OptId module_id;
  std::int64_t allocated = 0;  // running total after this event, bytes
  std::int64_t reserved = 0;   // running total after this event, bytes
  bool operator==(const MemoryEventRecord&) const = default;
};

struct OomReportRecord {
  Id id = 0;
  std::int64_t t_ns = 0;
  std::int64_t requested = 0, capacity = 0, free = 0, allocated = 0, reserved = 0, largest_free_block = 0;  // bytes
  std::string report;
  OptId step{};         // the step that ran out (schema version 6); NULL outside a step
  OptId kept_bytes{};   // live bytes that earlier steps allocated in the categories a step frees (activation,
                        // temporary, autograd_detail, input, unknown): memory kept across steps, a leak's (version 6)
  bool operator==(const OomReportRecord&) const = default;
};

struct GradStatRecord {
  std::int64_t step = 0;
  Id param_id = 0;
  double norm = 0, max_abs = 0;
  std::int64_t nan_count = 0, inf_count = 0;
  double zero_frac = 0;
  double param_norm = 0;
  std::optional<double> update_norm;
  bool operator==(const GradStatRecord&) const = default;
};

struct AnomalyRecord {
  Id id = 0;
  std::int64_t t_ns = 0;
  OptId step;
  AnomalyKind kind = AnomalyKind::nonfinite_forward;
  Severity severity = Severity::warning;
  OptId span_id, node_id, module_id, param_id;
  std::optional<double> value;
  std::string message;
  OptId rank;  // the rank that raised it, in a trace `glassbox merge` wrote; NULL in one process's trace
  OptId cause_id{};    // the earlier anomaly that explains this one (schema version 6); NULL: none known
  std::string cause{};  // the evidence linking them, one line ("" without cause_id)
  bool operator==(const AnomalyRecord&) const = default;
};

struct CounterRecord {
  std::int64_t t_ns = 0;
  Id name_id = 0;
  double value = 0;
  bool operator==(const CounterRecord&) const = default;
};

struct KernelRecord {
  Id span_id = 0;
  int device = 0;
  std::int64_t stream = 0;
  std::int64_t correlation_id = 0;
  OptId launch_span_id;  // the op span that launched the kernel (its "Self CUDA" time)
  std::string grid;   // "x,y,z"
  std::string block;  // "x,y,z"
  std::int64_t registers = 0;   // per thread
  std::int64_t shared_mem = 0;  // bytes per block
  bool operator==(const KernelRecord&) const = default;
};

// One collective of a data-parallel job (kind collective span on a communication thread: the span's name is the
// collective, its seq the group's collective number, the same on every rank).
struct CollectiveRecord {
  Id span_id = 0;
  std::int64_t bytes = 0;      // of one rank's tensor (all_gather: its input; reduce_scatter: its output)
  DType dtype = DType::float32;
  OptId reduce_op;             // strings.id of "sum", "avg", ...; NULL when the collective does not reduce
  OptId bucket;                // DistributedDataParallel's gradient bucket; NULL for other collectives
  std::int64_t peers = 0;      // ranks in the group
  std::int64_t queued_ns = 0;  // when the caller queued it (the span starts when the communication thread runs it)
  bool operator==(const CollectiveRecord&) const = default;
};

// One rank of a merged trace (`glassbox merge`): where its rows came from and how its clock was moved onto
// rank 0's. Rank r's time t became offset_ns + t * scale.
struct RankRecord {
  std::int64_t rank = 0;
  std::string source;      // the rank's trace file
  std::string host;
  std::int64_t offset_ns = 0;
  double scale = 1.0;
  std::string aligned_by;  // "clock_sync start and end", "clock_sync start", "started_at_unix_ns"
  bool operator==(const RankRecord&) const = default;
};

// A rank's training step in a merged trace (the merged `steps` are rank 0's).
struct RankStepRecord {
  std::int64_t rank = 0;
  std::int64_t step = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::optional<double> loss;
  bool skipped = false;
  bool operator==(const RankStepRecord&) const = default;
};

// Every record type, declared once here: the lists below are where each is registered, and the probes (ring
// tags), the collector (what it reads back from a ring) and the writer (statement slots, batched inserts) are
// generated from them. Adding a table: its struct above, its columns in tables.h (Table<> and AllTables), one entry
// here.
template <class... Rs>
struct RecordList {
  static constexpr std::size_t size = sizeof...(Rs);
};
// Every table's record, in the schema's order (the writer's statement slot is the position).
using AllRecords = RecordList<ThreadRecord, SpanRecord, OpDetailsRecord, ModuleRecord, ParamRecord, StepRecord,
                              GraphNodeRecord, GraphEdgeRecord, MemoryEventRecord, OomReportRecord, GradStatRecord,
                              AnomalyRecord, CounterRecord, KernelRecord, InstantRecord, CollectiveRecord,
                              RankRecord, RankStepRecord, StepMemoryRecord, DetailWindowRecord>;
// Records the probes copy into a thread's lock-free ring (trivially copyable, hot; the position is the ring tag).
// The others take the registry's mutex: records with strings inside, and the run summary (steps, step_memory),
// which must arrive even when a ring is full and detail is shed. Spans and instants have their own events.
using RingRecords = RecordList<MemoryEventRecord, GraphNodeRecord, GraphEdgeRecord, GradStatRecord, OpDetailsRecord,
                               CounterRecord>;
// Records the writer inserts many rows per statement (the many-per-step tables).
using BatchedRecords = RecordList<SpanRecord, MemoryEventRecord, OpDetailsRecord, GradStatRecord, GraphNodeRecord,
                                  GraphEdgeRecord, CounterRecord, InstantRecord, StepRecord, StepMemoryRecord>;

namespace detail {
template <class R, class... Rs>
constexpr int index_of() {
  int i = 0, found = -1;
  ((std::is_same_v<R, Rs> ? (found = found < 0 ? i : found, ++i) : ++i), ...);
  return found;
}
template <class R, class List>
struct IndexIn;
template <class R, class... Rs>
struct IndexIn<R, RecordList<Rs...>> : std::integral_constant<int, index_of<R, Rs...>()> {};
template <class List>
struct AllTrivial;
template <class... Rs>
struct AllTrivial<RecordList<Rs...>> : std::bool_constant<(std::is_trivially_copyable_v<Rs> && ...)> {};
template <class List, class All>
struct Within;
template <class... Rs, class All>
struct Within<RecordList<Rs...>, All> : std::bool_constant<((IndexIn<Rs, All>::value >= 0) && ...)> {};
}  // namespace detail

// Calls f(static_cast<R*>(nullptr)) for each record type R of the list, in order.
template <class... Rs, class F>
void for_each_record(RecordList<Rs...>, F&& f) {
  (f(static_cast<Rs*>(nullptr)), ...);
}

// R's position in List, or -1.
template <class R, class List>
inline constexpr int record_index = detail::IndexIn<R, List>::value;

static_assert(detail::AllTrivial<RingRecords>::value, "a ring record is copied byte for byte: no strings inside");
static_assert(detail::Within<RingRecords, AllRecords>::value && detail::Within<BatchedRecords, AllRecords>::value,
              "every record of a list is in AllRecords");

}  // namespace gb::trace
