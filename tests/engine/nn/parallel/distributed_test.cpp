// tests/engine/nn/parallel/distributed_test.cpp — DistributedDataParallel among the ranks mpirun starts (CTest runs
// it with 2, and alone as a group of one): rank 0's parameters everywhere after construction; one step on each
// rank's share of a batch equals one step of a single process on the whole batch, and leaves every rank with the
// same parameters; no_sync over two micro-batches; buckets launched in bucket order as backward fills them; an
// unused parameter is named by the next forward, or skipped with find_unused_parameters.
#include <glassbox/nn/parallel/distributed.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "engine/distributed/mpi_group.h"
#include "instrument/session.h"
#include "support/check.h"
#include "traces/reader.h"
#include "traces/temp_dir.h"

namespace dist = gb::distributed;
using gb::nn::parallel::DistributedDataParallel;
using gb::nn::parallel::DistributedDataParallelOptions;

namespace {

struct NetImpl : gb::nn::Module {
  NetImpl() {
    fc1 = register_module("fc1", gb::nn::Linear(6, 8));
    fc2 = register_module("fc2", gb::nn::Linear(8, 3));
    spare = register_module("spare", gb::nn::Linear(8, 2));
  }
  gb::Tensor forward(const gb::Tensor& x) {
    auto h = fc1->forward(x).relu();
    return use_spare ? fc2->forward(h) + spare->forward(h).sum(1, true) : fc2->forward(h);
  }
  gb::nn::Linear fc1{nullptr}, fc2{nullptr}, spare{nullptr};
  bool use_spare = true;
};
GB_MODULE(Net);

// The parameters flattened into one double tensor.
gb::Tensor flat_params(const std::vector<gb::Tensor>& ps) {
  std::vector<gb::Tensor> v;
  for (const auto& p : ps) v.push_back(p.detach().reshape({-1}).to(gb::kDouble));
  return gb::cat(v);
}

// A net with rank-dependent weights (so the broadcast is seen), and a copy for the single-process reference.
Net make_net(int seed) {
  gb::manual_seed(uint64_t(seed));
  return Net();
}

void copy_params(Net& to, const Net& from) {
  gb::NoGradGuard ng;
  auto a = to->parameters(), b = from->parameters();
  for (size_t i = 0; i < a.size(); ++i) a[i].copy_(b[i]);
}

}  // namespace

TEST_CASE("DDP: construction broadcasts rank 0's parameters; one step equals a single process on the whole batch") {
  if (!gbtest::ensure_mpi_group()) return;
  const int r = dist::get_rank(), n = dist::get_world_size();
  CAPTURE(r);
  Net net = make_net(100 + r);
  DistributedDataParallel<Net> ddp(net);
  // every rank holds rank 0's parameters: gather and compare
  {
    std::vector<gb::Tensor> all;
    dist::all_gather(all, flat_params(ddp.parameters()));
    for (int k = 0; k < n; ++k) CHECK(gb::equal(all[size_t(k)], all[0]));
    Net rank0 = make_net(100);
    CHECK(gb::equal(flat_params(ddp.parameters()), flat_params(rank0->parameters())));
  }
  // the same global batch on every rank; rank r trains on rows [4r, 4r + 4)
  gb::manual_seed(7);
  auto X = gb::randn({4 * n, 6}), Y = gb::randint(0, 3, {4 * n});
  Net ref = make_net(0);
  copy_params(ref, net);
  gb::optim::SGD opt(ddp.parameters(), gb::optim::SGDOptions(0.1));
  gb::optim::SGD ref_opt(ref->parameters(), gb::optim::SGDOptions(0.1));

  auto loss = gb::nn::functional::cross_entropy(ddp(X.narrow(0, 4 * r, 4)), Y.narrow(0, 4 * r, 4));
  loss.backward();
  CHECK(ddp.reducer().reductions() == 1);
  auto ref_loss = gb::nn::functional::cross_entropy(ref(X), Y);
  ref_loss.backward();
  auto ps = ddp.parameters(), rs = ref->parameters();
  for (size_t i = 0; i < ps.size(); ++i) {
    CAPTURE(i);
    REQUIRE(ps[i].grad().defined());
    gbtest::check_close(ps[i].grad(), rs[i].grad(), 1e-6, 1e-5);
  }
  opt.step();
  ref_opt.step();
  gbtest::check_close(flat_params(ddp.parameters()), flat_params(ref->parameters()), 1e-6, 1e-5);
  std::vector<gb::Tensor> all;
  dist::all_gather(all, flat_params(ddp.parameters()));
  for (int k = 0; k < n; ++k) CHECK(gb::equal(all[size_t(k)], all[0]));  // bit for bit on every rank
}

TEST_CASE("DDP: no_sync accumulates two micro-batches locally; the synced backward reduces their sum") {
  if (!gbtest::ensure_mpi_group()) return;
  const int r = dist::get_rank(), n = dist::get_world_size();
  Net net = make_net(200 + r);
  DistributedDataParallel<Net> ddp(net);
  Net ref = make_net(0);
  copy_params(ref, net);
  gb::manual_seed(8);
  auto X = gb::randn({2, 4 * n, 6}), Y = gb::randint(0, 3, {2, 4 * n});
  {
    auto guard = ddp.no_sync();
    gb::nn::functional::cross_entropy(ddp(X[0].narrow(0, 4 * r, 4)), Y[0].narrow(0, 4 * r, 4)).backward();
  }
  CHECK(ddp.reducer().reductions() == 0);  // nothing reduced yet: each rank has its own gradients
  gb::nn::functional::cross_entropy(ddp(X[1].narrow(0, 4 * r, 4)), Y[1].narrow(0, 4 * r, 4)).backward();
  CHECK(ddp.reducer().reductions() == 1);
  for (int k = 0; k < 2; ++k) gb::nn::functional::cross_entropy(ref(X[k]), Y[k]).backward();
  auto ps = ddp.parameters(), rs = ref->parameters();
  for (size_t i = 0; i < ps.size(); ++i) {
    CAPTURE(i);
    gbtest::check_close(ps[i].grad(), rs[i].grad(), 1e-6, 1e-5);
  }
}

TEST_CASE("DDP: buckets in reverse registration order, launched in order as backward makes them ready") {
  if (!gbtest::ensure_mpi_group()) return;
  Net net = make_net(300);
  // a cap of 50 bytes: a bucket closes at the first weight it takes (8x2 = 64, 8x3 = 96, 6x8 = 192 bytes)
  DistributedDataParallel<Net> ddp(net, DistributedDataParallelOptions().bucket_cap_mb(50.0 / (1 << 20)));
  const auto& buckets = ddp.reducer().buckets();
  // parameters: fc1 weight 0, bias 1; fc2 2, 3; spare 4, 5 — the last registered first, as PyTorch
  CHECK(buckets == std::vector<std::vector<size_t>>{{5, 4}, {3, 2}, {1, 0}});
  size_t count = 0;
  for (const auto& b : buckets) count += b.size();
  CHECK(count == net->parameters().size());
  gb::nn::functional::cross_entropy(ddp(gb::randn({4, 6})), gb::randint(0, 3, {4})).backward();
  const auto launched = ddp.reducer().launch_order();
  REQUIRE(launched.size() == buckets.size());
  for (size_t b = 0; b < launched.size(); ++b) CHECK(launched[b] == b);
  // backward made fc2/spare's gradients before fc1's: the ready order starts in the later layers
  const auto ready = ddp.reducer().ready_order();
  REQUIRE(ready.size() == net->parameters().size());
  CHECK(ready.back() <= 1);  // fc1's weight or bias, the last to get its gradient
}

TEST_CASE("DDP: as PyTorch, a bucket closes once it reaches its cap, the first at 1 MB") {
  if (!gbtest::ensure_mpi_group()) return;
  // an MLP 784-512-512-10: reversed, fc3 (20 KB) and fc2's bias fill less than 1 MB, so fc2's weight (1 MB) goes in
  // too and closes the first bucket (its all-reduce then overlaps fc1's backward); fc1 makes the second
  auto mlp = gb::nn::Sequential(gb::nn::Linear(784, 512), gb::nn::ReLU(), gb::nn::Linear(512, 512), gb::nn::ReLU(),
                                gb::nn::Linear(512, 10));
  DistributedDataParallel<gb::nn::Sequential> ddp(mlp);
  CHECK(ddp.reducer().buckets() == std::vector<std::vector<size_t>>{{5, 4, 3, 2}, {1, 0}});
  // a 2 MB cap after the first: the second layer's 1.6 MB weight leaves the bucket open, the first's crosses the
  // cap and goes in
  auto deeper = gb::nn::Sequential(gb::nn::Linear(784, 512), gb::nn::Linear(784, 512), gb::nn::Linear(512, 512),
                                   gb::nn::Linear(512, 10));
  DistributedDataParallel<gb::nn::Sequential> ddp2(deeper, DistributedDataParallelOptions().bucket_cap_mb(2.0));
  CHECK(ddp2.reducer().buckets() == std::vector<std::vector<size_t>>{{7, 6, 5, 4}, {3, 2, 1, 0}});
}

TEST_CASE("DDP traced: the buckets' all-reduces fire in bucket order while backward still runs") {
  if (!gbtest::ensure_mpi_group()) return;
  Net net = make_net(350);
  DistributedDataParallel<Net> ddp(net, DistributedDataParallelOptions().bucket_cap_mb(50.0 / (1 << 20)));
  const size_t buckets = ddp.reducer().buckets().size();
  REQUIRE(buckets >= 3);
  TempDir dir;
  const std::string path = dir.file("ddp.db");
  {
    gb::trace::Session session(path);
    gb::nn::functional::cross_entropy(ddp(gb::randn({4, 6})), gb::randint(0, 3, {4})).backward();
  }
  gb::trace::Reader r(path);
  std::map<gb::trace::Id, gb::trace::SpanRecord> spans;
  std::optional<gb::trace::SpanRecord> backward;
  for (const auto& s : r.all<gb::trace::SpanRecord>()) {
    spans[s.id] = s;
    if (s.kind == gb::trace::SpanKind::backward_phase && r.string(s.name_id) == "backward") backward = s;
  }
  REQUIRE(backward);
  std::vector<std::pair<int64_t, gb::trace::CollectiveRecord>> bucketed;  // (seq, row)
  for (const auto& c : r.all<gb::trace::CollectiveRecord>())
    if (c.bucket) bucketed.emplace_back(spans.at(c.span_id).seq.value_or(-1), c);
  std::sort(bucketed.begin(), bucketed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  REQUIRE(bucketed.size() == buckets);
  int64_t bytes = 0;
  for (size_t b = 0; b < buckets; ++b) {
    const auto& c = bucketed[b].second;
    CHECK(*c.bucket == int64_t(b));  // launched in bucket order: the order backward made them ready
    CHECK(*r.string(spans.at(c.span_id).name_id) == "all_reduce");
    CHECK(*r.string(*c.reduce_op) == "sum");  // each gradient divided by the world size into the bucket
    CHECK(c.queued_ns >= backward->start_ns);
    CHECK(c.queued_ns <= backward->end_ns);  // queued from inside backward: overlap with the rest of it
    if (b) CHECK(c.queued_ns >= bucketed[b - 1].second.queued_ns);
    bytes += c.bytes;
  }
  int64_t param_bytes = 0;
  for (const auto& p : net->parameters()) param_bytes += p.nbytes();
  CHECK(bytes == param_bytes);
  // the first bucket was queued before the last gradient (fc1's) was made: before the backward's last node ended
  int64_t last_node_end = 0;
  for (const auto& [id, s] : spans)
    if (s.kind == gb::trace::SpanKind::backward_node) last_node_end = std::max(last_node_end, s.end_ns);
  CHECK(bucketed.front().second.queued_ns < last_node_end);
}

TEST_CASE("DDP traced: a NaN one rank made is named there; the others say it came through the all-reduce") {
  if (!gbtest::ensure_mpi_group()) return;
  const int rank = dist::get_rank();
  if (dist::get_world_size() < 2) {
    MESSAGE("needs 2 ranks (CTest runs it under mpirun -np 2)");
    return;
  }
  Net net = make_net(360);
  DistributedDataParallel<Net> ddp(net);
  gb::optim::SGD opt(ddp.parameters(), 0.1);
  TempDir dir;
  const std::string path = dir.file("nan.db");
  {
    gb::trace::Session session(path);
    auto x = gb::randn({4, 6});
    if (rank == 1) x.index_put_({0, 0}, std::nanf(""));
    opt.zero_grad();
    gb::nn::functional::cross_entropy(ddp(x), gb::randint(0, 3, {4})).backward();
    opt.step();
  }
  const auto anomalies = gb::trace::Reader(path).anomalies();
  REQUIRE_FALSE(anomalies.empty());
  for (const auto& a : anomalies) MESSAGE("rank " << rank << ": " << a.message);
  if (rank == 1) {
    CHECK(anomalies.front().kind == gb::trace::AnomalyKind::nonfinite_forward);  // its own batch
  } else {
    CHECK(anomalies.front().kind == gb::trace::AnomalyKind::nonfinite_backward);
    CHECK(anomalies.front().message.find("came back from DistributedDataParallel's all-reduce") != std::string::npos);
    CHECK(anomalies.front().param_id);
    for (const auto& a : anomalies)  // no backward node of this rank is blamed for what another rank made
      CHECK(a.message.find("from finite incoming gradients") == std::string::npos);
  }
}

TEST_CASE("DDP: an unused parameter is named by the next forward; find_unused_parameters reduces without it") {
  if (!gbtest::ensure_mpi_group()) return;
  const int n = dist::get_world_size();
  {
    Net net = make_net(400);
    net->use_spare = false;
    DistributedDataParallel<Net> ddp(net);
    gb::nn::functional::cross_entropy(ddp(gb::randn({4, 6})), gb::randint(0, 3, {4})).backward();
    CHECK(ddp.reducer().reductions() == 0);  // spare's bucket never filled
    CHECK_THROWS_WITH_AS(ddp(gb::randn({4, 6})), doctest::Contains("find_unused_parameters(true)"), gb::Error);
  }
  {
    Net net = make_net(401);
    net->use_spare = false;
    DistributedDataParallel<Net> ddp(net, DistributedDataParallelOptions().find_unused_parameters(true));
    for (int step = 0; step < 2; ++step) {
      gb::nn::functional::cross_entropy(ddp(gb::randn({4, 6})), gb::randint(0, 3, {4})).backward();
      CHECK(ddp.reducer().reductions() == step + 1);
    }
    CHECK_FALSE(net->spare->weight.grad().defined());  // unused on every rank: left as it was
    CHECK(net->fc1->weight.grad().defined());
    std::vector<gb::Tensor> all;
    dist::all_gather(all, net->fc1->weight.grad().reshape({-1}));
    for (int k = 0; k < n; ++k) CHECK(gb::equal(all[size_t(k)], all[0]));
  }
}

TEST_CASE("DDP: one reduction per forward; a second backward through the retained graph is not reduced (PyTorch)") {
  if (!gbtest::ensure_mpi_group()) return;
  Net net = make_net(500);
  DistributedDataParallel<Net> ddp(net);
  auto loss = gb::nn::functional::cross_entropy(ddp(gb::randn({4, 6})), gb::randint(0, 3, {4}));
  loss.backward({}, /*retain_graph=*/true);
  CHECK(ddp.reducer().reductions() == 1);
  const auto reduced = net->fc1->weight.grad().clone();
  loss.backward();  // accumulates locally: the reduced gradient plus this rank's own
  CHECK(ddp.reducer().reductions() == 1);
  CHECK_FALSE(gb::equal(net->fc1->weight.grad(), reduced));
  gb::nn::functional::cross_entropy(ddp(gb::randn({4, 6})), gb::randint(0, 3, {4})).backward();
  CHECK(ddp.reducer().reductions() == 2);
}

TEST_CASE("DDP gradient_as_bucket_view: .grads become views into their buckets, and the steps stay exact") {
  if (!gbtest::ensure_mpi_group()) return;
  const int r = dist::get_rank(), n = dist::get_world_size();
  Net net = make_net(600 + r);
  DistributedDataParallel<Net> ddp(net, DistributedDataParallelOptions().gradient_as_bucket_view(true));
  Net ref = make_net(0);
  copy_params(ref, net);
  gb::optim::SGD opt(ddp.parameters(), gb::optim::SGDOptions(0.1));
  gb::optim::SGD ref_opt(ref->parameters(), gb::optim::SGDOptions(0.1));
  auto ps = ddp.parameters(), rs = ref->parameters();
  // each bucket's gradients lie back to back in its memory, in bucket order
  const auto check_views = [&] {
    for (const auto& bucket : ddp.reducer().buckets())
      for (size_t j = 1; j < bucket.size(); ++j) {
        const gb::Tensor &a = ps[bucket[j - 1]].grad(), &b = ps[bucket[j]].grad();
        CHECK(static_cast<const char*>(b.data_ptr()) ==
              static_cast<const char*>(a.data_ptr()) + a.numel() * int64_t(a.element_size()));
      }
  };
  gb::manual_seed(9);
  auto X = gb::randn({3, 4 * n, 6}), Y = gb::randint(0, 3, {3, 4 * n});
  std::vector<const void*> where;
  for (int step = 0; step < 3; ++step) {
    CAPTURE(step);
    opt.zero_grad(/*set_to_none=*/step != 2);  // the third step keeps the views, zeroed in place
    ref_opt.zero_grad();
    gb::nn::functional::cross_entropy(ddp(X[step].narrow(0, 4 * r, 4)), Y[step].narrow(0, 4 * r, 4)).backward();
    gb::nn::functional::cross_entropy(ref(X[step]), Y[step]).backward();
    for (size_t i = 0; i < ps.size(); ++i) {
      CAPTURE(i);
      gbtest::check_close(ps[i].grad(), rs[i].grad(), 1e-6, 1e-5);
    }
    check_views();
    std::vector<const void*> now;
    for (const auto& p : ps) now.push_back(p.grad().data_ptr());
    if (step == 2) CHECK(now == where);  // accumulated in the same bucket memory: nothing copied in or back
    where = now;
    opt.step();
    ref_opt.step();
    gbtest::check_close(flat_params(ddp.parameters()), flat_params(ref->parameters()), 1e-6, 1e-5);
  }
}

TEST_CASE("DDP gradient_as_bucket_view: a gradient unused on every rank keeps its own value, not the average") {
  if (!gbtest::ensure_mpi_group()) return;
  const int r = dist::get_rank();
  Net net = make_net(700);
  DistributedDataParallel<Net> ddp(
      net, DistributedDataParallelOptions().gradient_as_bucket_view(true).find_unused_parameters(true));
  gb::nn::functional::cross_entropy(ddp(gb::randn({4, 6})), gb::randint(0, 3, {4})).backward();
  gb::Tensor spare = net->spare->weight.grad();
  REQUIRE(spare.defined());
  spare.fill_(double(r + 1));  // a view into the bucket, now different on every rank
  net->use_spare = false;
  gb::nn::functional::cross_entropy(ddp(gb::randn({4, 6})), gb::randint(0, 3, {4})).backward();
  CHECK(ddp.reducer().reductions() == 2);
  CHECK(gb::equal(net->spare->weight.grad(), gb::full({2, 8}, double(r + 1))));
}
