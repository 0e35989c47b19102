// tests/engine/distributed/nccl_backend_gpu_test.cpp — GPU tier: the NCCL backend on CUDA tensors. Alone it is a
// group of one (RANK=0, WORLD_SIZE=1 set here when no launcher set them); CTest also runs it under mpirun with
// 2 ranks where the machine has 2 GPUs (NCCL's id handed out through MPI), and with MASTER_ADDR/MASTER_PORT (over
// TCP). Every collective's values for every rank count; the collective reads what the caller's stream wrote before
// it and the caller's later kernels see its result; tensors it cannot carry are refused on the caller's thread; a
// DDP step on cuda equals a single process on the whole batch (on the CPU); and in a trace every collective is a span
// on the communication track, in order, at GPU times inside the session, with its collectives row.
#include <glassbox/distributed/distributed.h>
#include <glassbox/nn/parallel/distributed.h>

#include <cstdlib>
#include <map>

#include "instrument/session.h"
#include "support/check.h"
#include "traces/reader.h"
#include "traces/temp_dir.h"

namespace dist = gb::distributed;
namespace tr = gb::trace;

namespace {

// The default group on NCCL, once per process, on this rank's GPU.
void ensure_nccl_group() {
  if (dist::is_initialized()) return;
  if (!std::getenv("RANK") && !std::getenv("OMPI_COMM_WORLD_RANK")) {
    setenv("RANK", "0", 1);
    setenv("WORLD_SIZE", "1", 1);
  }
  const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  gb::cuda::set_device(int(local ? std::atoi(local) % gb::cuda::device_count() : 0));
  dist::init_process_group("nccl");
}

gb::Device gpu() { return gb::Device(gb::DeviceType::CUDA, gb::cuda::current_device()); }

struct NetImpl : gb::nn::Module {
  NetImpl() {
    fc1 = register_module("fc1", gb::nn::Linear(6, 16));
    fc2 = register_module("fc2", gb::nn::Linear(16, 3));
  }
  gb::Tensor forward(const gb::Tensor& x) { return fc2->forward(fc1->forward(x).relu()); }
  gb::nn::Linear fc1{nullptr}, fc2{nullptr};
};
GB_MODULE(Net);

}  // namespace

TEST_CASE("NCCL: every collective's values on every rank, in every dtype it carries") {
  ensure_nccl_group();
  const int r = dist::get_rank(), n = dist::get_world_size();
  CAPTURE(r);
  CHECK(dist::get_backend() == "nccl");
  const auto opt = [](gb::ScalarType t) { return gb::TensorOptions().dtype(t).device(gpu()); };
  const double sum = n * (n + 1) / 2.0;  // of rank + 1 over the ranks

  for (gb::ScalarType t : {gb::kFloat, gb::kDouble, gb::kHalf, gb::kBFloat16, gb::kInt32, gb::kInt64, gb::kUInt8}) {
    CAPTURE(gb::to_string(t));
    gb::Tensor x = gb::full({1000}, r + 1, opt(t));
    dist::all_reduce(x);
    CHECK(gb::equal(x.cpu(), gb::full({1000}, sum, gb::TensorOptions().dtype(t))));
    x = gb::full({7}, r + 1, opt(t));
    dist::all_reduce(x, dist::ReduceOp::MAX);
    CHECK(gb::equal(x.cpu(), gb::full({7}, n, gb::TensorOptions().dtype(t))));
  }
  gb::Tensor avg = gb::full({64}, 2.0 * (r + 1), opt(gb::kFloat));
  dist::all_reduce(avg, dist::ReduceOp::AVG);
  gbtest::check_close(avg.cpu(), gb::full({64}, n + 1.0), 0, 1e-6);
  gb::Tensor flag = gb::full({3}, r == 0, opt(gb::kBool));  // bool sums as "or", products as "and"
  gb::Tensor both = flag.clone();
  dist::all_reduce(flag);
  dist::all_reduce(both, dist::ReduceOp::PRODUCT);
  CHECK(flag.cpu().all().item().toBool());
  CHECK(both.cpu().any().item().toBool() == (n == 1));

  gb::Tensor b = gb::full({5, 3}, double(r), opt(gb::kFloat));
  dist::broadcast(b, n - 1);
  CHECK(gb::equal(b.cpu(), gb::full({5, 3}, double(n - 1))));

  std::vector<gb::Tensor> gathered;
  dist::all_gather(gathered, gb::full({2, 2}, double(r * 10), opt(gb::kFloat)));
  REQUIRE(int(gathered.size()) == n);
  for (int k = 0; k < n; ++k) {
    CHECK(gathered[size_t(k)].device() == gpu());
    CHECK(gb::equal(gathered[size_t(k)].cpu(), gb::full({2, 2}, double(k * 10))));
  }

  std::vector<gb::Tensor> parts;
  for (int k = 0; k < n; ++k) parts.push_back(gb::full({4}, double(k + 100 * r), opt(gb::kFloat)));
  gb::Tensor mine = gb::empty({4}, opt(gb::kFloat));
  dist::reduce_scatter(mine, parts);
  CHECK(gb::equal(mine.cpu(), gb::full({4}, double(n * r + 100 * (n * (n - 1) / 2)))));

  dist::barrier();
}

TEST_CASE("NCCL: the collective runs after the caller's stream's work and before the caller's next kernels") {
  ensure_nccl_group();
  const int n = dist::get_world_size();
  // a long chain of kernels on the current stream writes x; the all-reduce must see its end, not its start
  gb::Tensor x = gb::zeros({1 << 22}, gb::TensorOptions().device(gpu()));
  for (int i = 0; i < 50; ++i) x.add_(1.0);
  auto work = dist::all_reduce(x, dist::ReduceOp::SUM, /*async_op=*/true);
  REQUIRE(work);
  work->wait();            // the current stream waits for it (the host does not)
  gb::Tensor y = x * 2.0;  // on the current stream: after the all-reduce
  CHECK(y.cpu().min().item().toDouble() == 100.0 * n);
  CHECK(y.cpu().max().item().toDouble() == 100.0 * n);
  CHECK(work->is_success() == work->is_completed());
}

TEST_CASE("NCCL: tensors it cannot carry are refused on the caller's thread, naming the device and the fix") {
  ensure_nccl_group();
  const std::string dev = gpu().str();
  CHECK_THROWS_WITH_AS(dist::all_reduce(gb::ones({3})),
                       doctest::Contains(("the tensor is on cpu; this rank's NCCL group runs on " + dev).c_str()),
                       gb::Error);
  CHECK_THROWS_WITH_AS(dist::all_reduce(gb::ones({3}, gb::TensorOptions().dtype(gb::kInt16).device(gpu()))),
                       doctest::Contains("not int16"), gb::TypeError);
  CHECK_THROWS_WITH_AS(dist::all_reduce(gb::ones({4, 4}, gb::TensorOptions().device(gpu())).t()),
                       doctest::Contains("is not contiguous"), gb::Error);
  CHECK_THROWS_WITH_AS(
      dist::all_reduce(gb::ones({3}, gb::TensorOptions().dtype(gb::kInt32).device(gpu())), dist::ReduceOp::AVG),
      doctest::Contains("AVG needs a floating dtype"), gb::Error);
  // the group still works afterwards
  gb::Tensor t = gb::ones({2}, gb::TensorOptions().device(gpu()));
  dist::all_reduce(t);
  CHECK(t.cpu()[0].item().toDouble() == dist::get_world_size());
}

TEST_CASE("NCCL: a DDP step on cuda equals one process on the whole batch") {
  ensure_nccl_group();
  const int r = dist::get_rank(), n = dist::get_world_size();
  gb::manual_seed(11 + uint64_t(r));  // rank-dependent: the construction's broadcast must make them equal
  Net net;
  net->to(gpu());
  gb::nn::parallel::DistributedDataParallel<Net> ddp(net);
  gb::manual_seed(11);
  Net ref;  // rank 0's initial weights, on the cpu
  gb::manual_seed(12);
  gb::Tensor X = gb::randn({4 * n, 6}), Y = gb::randn({4 * n, 3});
  const auto loss_of = [](const gb::Tensor& out, const gb::Tensor& y) { return (out - y).pow(2).mean(); };
  loss_of(ddp(X.narrow(0, 4 * r, 4).to(gpu())), Y.narrow(0, 4 * r, 4).to(gpu())).backward();
  CHECK(ddp.reducer().reductions() == 1);
  loss_of(ref(X), Y).backward();
  auto ps = ddp.parameters(), rs = ref->parameters();
  REQUIRE(ps.size() == rs.size());
  for (size_t i = 0; i < ps.size(); ++i) {
    CAPTURE(i);
    CHECK(ps[i].device() == gpu());
    gbtest::check_close(ps[i].detach().cpu(), rs[i].detach(), 1e-6, 1e-6);  // the broadcast
    REQUIRE(ps[i].grad().defined());
    gbtest::check_close(ps[i].grad().cpu(), rs[i].grad(), 1e-5, 1e-5);  // the averaged gradient
  }
}

TEST_CASE("NCCL traced: each collective is a span on the communication track at its GPU time, with its row") {
  ensure_nccl_group();
  TempDir tmp;
  const std::string path = tmp.file("nccl.db");
  std::int64_t bytes = 0;
  {
    tr::Session s(path, tr::SessionOptions{.on_full = tr::OnFull::block});
    REQUIRE(s.active());
    gb::Tensor x = gb::ones({1 << 20}, gb::TensorOptions().device(gpu()));
    bytes = x.nbytes();
    for (int i = 0; i < 3; ++i) dist::all_reduce(x);
    dist::barrier();  // the host waits: every collective before it finished and was traced
  }
  tr::Reader r(path);
  CHECK(r.meta("distributed_backend") == "nccl");
  std::map<tr::Id, tr::ThreadRecord> threads;
  for (const auto& t : r.all<tr::ThreadRecord>()) threads[t.id] = t;
  std::map<tr::Id, tr::CollectiveRecord> rows;
  for (const auto& c : r.all<tr::CollectiveRecord>()) rows[c.span_id] = c;
  std::vector<tr::SpanRecord> colls;
  std::int64_t first = INT64_MAX, last = 0;
  for (const auto& s : r.all<tr::SpanRecord>()) {
    first = std::min(first, s.start_ns);
    last = std::max(last, s.end_ns);
    if (s.kind == tr::SpanKind::collective && threads[s.thread_id].role == tr::ThreadRole::communication)
      colls.push_back(s);
  }
  REQUIRE(colls.size() == 4);  // three all-reduces and the barrier
  std::sort(colls.begin(), colls.end(), [](const auto& a, const auto& b) { return a.seq < b.seq; });
  for (size_t i = 0; i < colls.size(); ++i) {
    CAPTURE(i);
    const tr::SpanRecord& s = colls[i];
    CHECK(r.string(s.name_id) == (i < 3 ? "all_reduce" : "barrier"));
    CHECK(s.end_ns > s.start_ns);
    CHECK(s.end_ns - s.start_ns < 1'000'000'000);
    CHECK(s.start_ns >= first);
    if (i > 0) CHECK(s.start_ns >= colls[i - 1].end_ns - 2000);  // one stream: one after another (anchor error)
    REQUIRE(rows.contains(s.id));
    CHECK(rows[s.id].peers == dist::get_world_size());
    if (i < 3) CHECK(rows[s.id].bytes == bytes);
  }
  CHECK(colls.back().seq.value() - colls.front().seq.value() == 3);
  CHECK(colls.back().end_ns <= last);
}
