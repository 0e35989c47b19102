// engine/distributed/distributed.cpp — the default process group and torch.distributed's module functions over it,
// the backends this build has, and the tensor checks every backend makes.
#include "glassbox/distributed/distributed.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <utility>

#include "distributed/backends.h"
#include "distributed/collective_trace.h"
#include "glassbox/core/error.h"
#include "glassbox/ops/factory.h"
#include "instrument/probe.h"

namespace gb::distributed {
namespace {

struct DefaultGroup {
  std::mutex mu;
  std::shared_ptr<ProcessGroup> group;
  std::string backend;
  bool clock_synced = false;  // the start handshake ran: destroy_process_group runs the end one
};
DefaultGroup& state() {
  static DefaultGroup* s = new DefaultGroup();  // never destroyed: the exit handler below may still use it
  return *s;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ", ") + s;
  return out.empty() ? "none" : out;
}

std::shared_ptr<ProcessGroup> require_group(const char* fn) {
  std::lock_guard<std::mutex> lock(state().mu);
  GB_CHECK(state().group, "gb::distributed::", fn,
           ": the default process group is not initialized: call gb::distributed::init_process_group(\"mpi\") first "
           "(and start the program under mpirun, e.g. mpirun -np 2 ./program)");
  return state().group;
}

// Meta rows of the trace recording (a session hook: also at the start of a later session): distributed_backend,
// rank and world_size of the default group.
void write_group_meta() {
  std::shared_ptr<ProcessGroup> group;
  std::string backend;
  {
    std::lock_guard<std::mutex> lock(state().mu);
    group = state().group;
    backend = state().backend;
  }
  if (!group) return;
  trace::set_meta("distributed_backend", backend);
  trace::set_meta("rank", std::to_string(group->getRank()));
  trace::set_meta("world_size", std::to_string(group->getSize()));
}

// The clock handshake `glassbox merge` aligns the ranks' traces by (traces/SCHEMA.md): when every rank records a
// trace, barriers named clock_sync right after init_process_group and again in destroy_process_group; a
// barrier's end is the same moment on every rank. Whether every rank records is agreed first (a MIN all-reduce that
// runs whether or not this rank traces), so the ranks always issue the same collectives.
bool every_rank_traces(ProcessGroup& group) {
  // on the group's device (NCCL carries GPU tensors only); read back on the host
  Tensor flag = full({1}, trace::enabled() ? 1 : 0, TensorOptions().dtype(kInt32).device(detail::group_device(group)));
  std::vector<Tensor> ts{flag};
  {
    detail::CollectiveTag tag(std::nullopt, "clock_sync_vote");
    group.allreduce(ts, AllreduceOptions{ReduceOp::MIN})->wait();
  }
  return flag.item().toLong() == 1;
}
// Several barriers in a row: each bounds the offset between two ranks' clocks (a barrier releases every rank after
// the last one entered and before any returned), and a rank preempted as one barrier returns only widens that one's
// bounds: the merge intersects them (tools/merge.cpp).
constexpr int kClockSyncBarriers = 5;
void clock_sync(ProcessGroup& group) {
  detail::CollectiveTag tag(std::nullopt, "clock_sync");
  for (int i = 0; i < kClockSyncBarriers; ++i) group.barrier()->wait();
}

// A synchronous call waits here and returns nullptr, as torch.distributed's do.
std::shared_ptr<Work> finish_call(std::shared_ptr<Work> work, bool async_op) {
  if (async_op) return work;
  work->wait();
  return nullptr;
}

}  // namespace

std::vector<std::string> available_backends() {
  std::vector<std::string> out;
  if (detail::mpi_built()) out.push_back("mpi");
  if (detail::nccl_built()) out.push_back("nccl");
  return out;
}

void init_process_group(const std::string& backend, std::chrono::milliseconds timeout) {
  {
    std::lock_guard<std::mutex> lock(state().mu);
    GB_CHECK(!state().group, "gb::distributed::init_process_group: the default process group is already initialized (",
             state().backend, ", rank ", state().group->getRank(), " of ", state().group->getSize(),
             "): call destroy_process_group() before starting another");
    GB_CHECK(timeout.count() > 0, "gb::distributed::init_process_group: the timeout must be positive, got ",
             timeout.count(), " ms");
    const std::vector<std::string> built = available_backends();
    std::string name = backend;
    if (name.empty()) {
      GB_CHECK(!built.empty(),
               "gb::distributed::init_process_group: this build has no distributed backend. Install "
               "Open MPI (apt-get install libopenmpi-dev openmpi-bin, or `make deps`) and rebuild glassbox.");
      name = built.front();
    }
    if (name == "mpi") {
      state().group = detail::make_mpi_group(timeout);
    } else if (name == "nccl") {
      state().group = detail::make_nccl_group(timeout);
    } else {
      throw Error(gb::detail::str_cat("gb::distributed::init_process_group: unknown backend \"", name,
                                      "\"; this build has: ", joined(built), " (\"\" picks the first)"));
    }
    state().backend = name;
  }
  // At exit the default group ends first (its collectives drained, its thread joined), then MPI (registered before
  // this, so it runs after). The trace says which rank this is (outside the lock: the hook runs at once if a session
  // is recording, and takes it).
  static const bool once = [] {
    trace::add_session_hook(write_group_meta, nullptr);
    return std::atexit([] { destroy_process_group(); }) == 0;
  }();
  (void)once;
  write_group_meta();  // the hook covers the sessions started later
  std::shared_ptr<ProcessGroup> group = require_group("init_process_group");
  if (every_rank_traces(*group)) {
    clock_sync(*group);
    std::lock_guard<std::mutex> lock(state().mu);
    state().clock_synced = true;
  }
}

bool is_initialized() {
  std::lock_guard<std::mutex> lock(state().mu);
  return state().group != nullptr;
}

void destroy_process_group() {
  std::shared_ptr<ProcessGroup> group;
  bool synced = false;
  {
    std::lock_guard<std::mutex> lock(state().mu);
    group = std::move(state().group);  // leaves it empty
    state().backend.clear();
    synced = std::exchange(state().clock_synced, false);
  }
  if (group && synced) {  // every rank agreed at init: every rank runs this end handshake too
    try {
      clock_sync(*group);
    } catch (const std::exception& e) {  // a peer that never arrives: the trace keeps its start handshake only
      std::fprintf(stderr, "glassbox: rank %d: the clock handshake at destroy_process_group failed: %s\n",
                   group->getRank(), e.what());
    }
  }
  group.reset();  // the backend's destructor drains its queue and joins its thread
}

int get_rank() { return require_group("get_rank")->getRank(); }
int get_world_size() { return require_group("get_world_size")->getSize(); }
std::string get_backend() { return require_group("get_backend")->getBackendName(); }
std::shared_ptr<ProcessGroup> default_group() { return require_group("default_group"); }

std::shared_ptr<Work> all_reduce(const Tensor& tensor, ReduceOp op, bool async_op) {
  std::vector<Tensor> ts{tensor};
  return finish_call(require_group("all_reduce")->allreduce(ts, AllreduceOptions{op}), async_op);
}

std::shared_ptr<Work> broadcast(const Tensor& tensor, int64_t src, bool async_op) {
  std::vector<Tensor> ts{tensor};
  return finish_call(require_group("broadcast")->broadcast(ts, BroadcastOptions{src}), async_op);
}

std::shared_ptr<Work> all_gather(std::vector<Tensor>& tensor_list, const Tensor& tensor, bool async_op) {
  auto group = require_group("all_gather");
  detail::check_tensor(tensor, "all_gather", "the input");
  if (tensor_list.empty())
    for (int r = 0; r < group->getSize(); ++r) tensor_list.push_back(empty_like(tensor));
  std::vector<std::vector<Tensor>> outputs{tensor_list};
  std::vector<Tensor> inputs{tensor};
  return finish_call(group->allgather(outputs, inputs), async_op);
}

std::shared_ptr<Work> reduce_scatter(const Tensor& output, const std::vector<Tensor>& input_list, ReduceOp op,
                                     bool async_op) {
  std::vector<Tensor> outputs{output};
  std::vector<std::vector<Tensor>> inputs{input_list};
  return finish_call(require_group("reduce_scatter")->reduce_scatter(outputs, inputs, ReduceScatterOptions{op}),
                     async_op);
}

std::shared_ptr<Work> barrier(bool async_op) { return finish_call(require_group("barrier")->barrier(), async_op); }

namespace detail {

void check_tensor(const Tensor& t, const char* op, const char* what) {
  GB_CHECK(t.defined(), "gb::distributed::", op, ": ", what, " is an undefined tensor");
  GB_CHECK(t.is_cpu(), "gb::distributed::", op, ": ", what, " is on ", t.device().str(),
           "; the MPI backend carries CPU tensors (move it with .cpu(), or use backend \"nccl\" for GPU tensors)");
  GB_CHECK(t.is_contiguous(), "gb::distributed::", op, ": ", what, " (sizes ", t.sizes(), ", strides ", t.strides(),
           ") is not contiguous; pass t.contiguous() and copy the result back");
}

void check_one_tensor(const std::vector<Tensor>& tensors, const char* op) {
  GB_CHECK(tensors.size() == 1, "gb::distributed::", op, ": expected one tensor per call on a CPU backend, got ",
           tensors.size());
  check_tensor(tensors[0], op, "the tensor");
}

void check_avg_dtype(ScalarType t, const char* op) {
  GB_CHECK(is_floating_point(t), "gb::distributed::", op, ": ReduceOp::AVG needs a floating dtype, got ", to_string(t),
           "; reduce with SUM and divide");
}

std::string describe_tensor(const Tensor& t) {
  return gb::detail::str_cat(t.numel(), " x ", to_string(t.scalar_type()));
}

void check_same_layout(const Tensor& t, const Tensor& like, const char* op, const char* what) {
  check_tensor(t, op, what);
  GB_CHECK(t.sizes() == like.sizes() && t.scalar_type() == like.scalar_type(), "gb::distributed::", op, ": ", what,
           " has sizes ", t.sizes(), " and dtype ", to_string(t.scalar_type()), ", expected sizes ", like.sizes(),
           " and dtype ", to_string(like.scalar_type()), " (as the input)");
}

}  // namespace detail
}  // namespace gb::distributed
