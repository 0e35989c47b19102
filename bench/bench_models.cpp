// bench/bench_models.cpp — whole training steps and forward-only inference of six models, glassbox and libtorch
// in the same run, and the machine's own limits measured in that run:
//   tiny_mlp      32-64-64-4, batch 32, SGD momentum (per-op costs dominate)
//   mlp           784-1024-1024-10, batch 256, SGD momentum (GEMM dominates)
//   small_cnn     two conv-bn-relu-pool blocks + linear on 1x28x28, batch 64, SGD momentum
//   resnet_stack  stem + four 32-channel basic blocks on 3x16x16, batch 32, SGD momentum
//   transformer   2 encoder layers, d_model 256, 4 heads, ff 1024, L 128, batch 16, AdamW
//   lstm          2-layer LSTM of 128 over 28 steps of 28 features (MNIST rows), batch 100, linear head, AdamW
//   limits        GEMM GFLOP/s at the MLP step's eight GEMM shapes (OpenBLAS called directly) and memory bandwidth
//                 (a STREAM triad over 3 x 64 MiB, every thread)
//   --trace DIR   no timing: trace 20 training steps and 5 inference passes of glassbox's model(s) into DIR/<model>.db
//                 (bench/trace_models.sh reports them and screenshots their slowest step)
// Each model also reports the heap allocations (operator new, counted by this program's replacement of it) of one
// training step and one inference pass in each library: the objects of the per-op path (tensors, shapes, autograd
// nodes). Tensor data is not among them: both libraries' CPU allocators take it from posix_memalign, and glassbox's
// from its cache after the first step.
//
// Built once per peer (bench/CMakeLists.txt): bench_models against Debian's libtorch 1.13, bench_models_torch2
// against libtorch 2.x from PyPI's wheel; "peer" names the version. The models are one source (bench/models.inc)
// compiled twice, once against each library; glassbox's initial
// weights are copied into libtorch's, and the first loss of each must agree (printed as initial_loss_rel_diff). Both
// run at the same thread count: glassbox owns its pool and OpenBLAS's count; libtorch is timed with its intra-op
// pool at 1 thread and at `threads`, and compared against its faster setting. Rounds alternate (bench::compare).
// A JSON line per (model, mode): value = glassbox ms, peer_value = libtorch ms, ratio below 1: glassbox faster.
#include <cblas.h>
#include <glassbox/glassbox.h>
#include <torch/torch.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "bench_common.h"
#include "model_weights.h"
#include "models.h"

// Every operator new of the process (glassbox's, libtorch's, the standard library's) counted; operator new[] and
// the deletes of both forward here (the standard library's defaults). The aligned forms keep their own pair.
namespace {
std::atomic<int64_t> g_heap_allocs{0};
}  // namespace
void* operator new(std::size_t n) {
  g_heap_allocs.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
// GCC checks new/delete pairs by name and takes this free for a mismatch with the operator new it was inlined after.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace {

int g_threads = 1;

struct Setting {
  const char* name;
  std::vector<int64_t> input;  // with the batch first (the transformer's is (L, N, E))
  int64_t batch;
  bool adamw;
  int inner;  // calls per timing sample
};

// The two libraries' optimizer names, as one type each (make_optimizer).
struct GbOptim {
  using Optimizer = gb::optim::Optimizer;
  using AdamW = gb::optim::AdamW;
  using AdamWOptions = gb::optim::AdamWOptions;
  using SGD = gb::optim::SGD;
  using SGDOptions = gb::optim::SGDOptions;
};
struct TorchOptim {
  using Optimizer = torch::optim::Optimizer;
  using AdamW = torch::optim::AdamW;
  using AdamWOptions = torch::optim::AdamWOptions;
  using SGD = torch::optim::SGD;
  using SGDOptions = torch::optim::SGDOptions;
};

// The optimizer a setting trains with, over `params`: AdamW(1e-4) or SGD(0.01, momentum 0.9), in either library.
template <class Optim, class Params>
std::shared_ptr<typename Optim::Optimizer> make_optimizer(const Setting& s, Params params) {
  if (s.adamw) return std::make_shared<typename Optim::AdamW>(params, typename Optim::AdamWOptions(1e-4));
  return std::make_shared<typename Optim::SGD>(params, typename Optim::SGDOptions(0.01).momentum(0.9));
}

// --trace DIR: glassbox's model alone, untimed: 5 warm-up steps, then 20 training steps and 5 inference passes inside
// a trace session writing DIR/<model>.db, for `glassbox report` and the viewer (bench/trace_models.sh).
template <class G>
void trace_model(const Setting& s, G g, const std::string& dir) {
  gb::Tensor x = gb::randn(s.input);
  gb::Tensor y = gb::randint(0, s.name == std::string("tiny_mlp") ? 4 : 10, {s.batch});
  auto opt = make_optimizer<GbOptim>(s, g->parameters());
  auto step = [&] {
    gb::Tensor loss = gb::nn::functional::cross_entropy(g->forward(x), y);
    opt->zero_grad();
    loss.backward();
    opt->step();
  };
  for (int i = 0; i < 5; ++i) step();
  const std::string path = dir + "/" + s.name + ".db";
  std::remove(path.c_str());
  {
    gb::trace::Session session(path);
    for (int i = 0; i < 20; ++i) step();
    g->eval();
    gb::NoGradGuard no_grad;
    for (int i = 0; i < 5; ++i) g->forward(x);
  }
  std::printf("traced %s: 20 training steps, 5 inference passes into %s\n", s.name, path.c_str());
}

template <class G, class T>
void bench_model(const Setting& s, G g, T t) {
  bench::copy_weights(g, t);
  gb::Tensor x = gb::randn(s.input);
  gb::Tensor y = gb::randint(0, s.name == std::string("tiny_mlp") ? 4 : 10, {s.batch});
  torch::Tensor tx = bench::to_torch(x), ty = bench::to_torch(y);

  auto gopt = make_optimizer<GbOptim>(s, g->parameters());
  auto topt = make_optimizer<TorchOptim>(s, t->parameters());
  const double g_loss = gb::nn::functional::cross_entropy(g->forward(x), y).template item<double>();
  const double t_loss = torch::nn::functional::cross_entropy(t->forward(tx), ty).template item<double>();
  const double loss_diff = std::abs(g_loss - t_loss) / std::max(std::abs(t_loss), 1e-12);

  auto g_step = [&] {
    gb::Tensor loss = gb::nn::functional::cross_entropy(g->forward(x), y);
    gopt->zero_grad();
    loss.backward();
    gopt->step();
  };
  // libtorch's intra-op count is OpenMP's per-thread setting, which glassbox's oneDNN convolutions set to glassbox's
  // count: each libtorch call puts back the count being measured (a cheap read when nothing changed it).
  int t_threads = 1;
  auto t_threads_back = [&] {
    if (torch::get_num_threads() != t_threads) torch::set_num_threads(t_threads);
  };
  auto t_step = [&] {
    t_threads_back();
    torch::Tensor loss = torch::nn::functional::cross_entropy(t->forward(tx), ty);
    topt->zero_grad();
    loss.backward();
    topt->step();
  };
  auto g_infer = [&] {
    gb::NoGradGuard no_grad;
    g->forward(x);
  };
  auto t_infer = [&] {
    t_threads_back();
    torch::NoGradGuard no_grad;
    t->forward(tx);
  };

  // Heap allocations of one call, the mean over 5 after 2 (warm caches, optimizer state made).
  auto allocs_per_call = [](const std::function<void()>& f) {
    for (int i = 0; i < 2; ++i) f();
    const int64_t before = g_heap_allocs.load();
    for (int i = 0; i < 5; ++i) f();
    return double(g_heap_allocs.load() - before) / 5;
  };

  const double seconds = 0.6;
  for (int mode = 0; mode < 2; ++mode) {
    const bool train = mode == 0;
    g->train(train);
    t->train(train);
    torch::set_num_threads(t_threads = 1);
    gb::set_num_threads(g_threads);  // OpenBLAS's count again (one shared library)
    auto [ms, peer1] = train ? bench::compare(g_step, t_step, s.inner, seconds)
                             : bench::compare(g_infer, t_infer, s.inner, seconds);
    torch::set_num_threads(t_threads = g_threads);
    gb::set_num_threads(g_threads);
    const double peerN = bench::time_per_call(train ? std::function<void()>(t_step) : std::function<void()>(t_infer),
                                              s.inner, seconds);
    torch::set_num_threads(t_threads = 1);
    gb::set_num_threads(g_threads);
    const double peer = std::min(peer1, peerN);
    bench::emit("models", std::string(s.name) + (train ? "_train_step_ms" : "_inference_ms"), ms * 1e3, "ms",
                peer * 1e3,
                "\"threads\": " + std::to_string(g_threads) + ", \"libtorch_intraop1_ms\": " +
                    std::to_string(peer1 * 1e3) + ", \"libtorch_intraopN_ms\": " + std::to_string(peerN * 1e3) +
                    ", \"initial_loss_rel_diff\": " + std::to_string(loss_diff));
    const double g_allocs = allocs_per_call(train ? std::function<void()>(g_step) : std::function<void()>(g_infer));
    const double t_allocs = allocs_per_call(train ? std::function<void()>(t_step) : std::function<void()>(t_infer));
    bench::emit("models", std::string(s.name) + (train ? "_train_step_heap_allocs" : "_inference_heap_allocs"),
                g_allocs, "allocations", t_allocs);
  }
}

void emit_limit(const std::string& metric, double value, const std::string& unit, const std::string& extra = "") {
  std::printf("{\"bench\": \"models\", \"metric\": \"%s\", \"value\": %.6g, \"unit\": \"%s\", \"peer\": \"machine\"%s%s}\n",
              metric.c_str(), value, unit.c_str(), extra.empty() ? "" : ", ", extra.c_str());
  std::fflush(stdout);
}

// The MLP step's GEMMs (batch 256; 784-1024-1024-10): forward Y = X W^T, weight gradients dW = dY^T X, input
// gradients dX = dY W for the two upper layers (the input needs none). Returns the seconds of all eight, each timed
// alone through OpenBLAS, and their FLOPs.
std::pair<double, double> mlp_gemm_floor() {
  struct Gemm {
    CBLAS_TRANSPOSE ta, tb;
    int m, n, k;
  };
  const int b = 256;
  const int dims[4] = {784, 1024, 1024, 10};
  std::vector<Gemm> gemms;
  for (int l = 0; l < 3; ++l) {
    const int in = dims[l], out = dims[l + 1];
    gemms.push_back({CblasNoTrans, CblasTrans, b, out, in});    // Y (b x out) = X (b x in) W^T
    gemms.push_back({CblasTrans, CblasNoTrans, out, in, b});    // dW (out x in) = dY^T X
    if (l > 0) gemms.push_back({CblasNoTrans, CblasNoTrans, b, in, out});  // dX (b x in) = dY W
  }
  double seconds = 0, flops = 0;
  for (const Gemm& g : gemms) {
    std::vector<float> a(size_t(g.m) * g.k, 0.5f), bm(size_t(g.k) * g.n, 0.25f), c(size_t(g.m) * g.n);
    const int lda = g.ta == CblasNoTrans ? g.k : g.m, ldb = g.tb == CblasNoTrans ? g.n : g.k;
    seconds += bench::time_per_call(
        [&] { cblas_sgemm(CblasRowMajor, g.ta, g.tb, g.m, g.n, g.k, 1.f, a.data(), lda, bm.data(), ldb, 0.f, c.data(), g.n); },
        4, 0.3);
    flops += 2.0 * g.m * g.n * g.k;
  }
  return {seconds, flops};
}

const Setting kSettings[] = {
    {"tiny_mlp", {32, 32}, 32, false, 50},
    {"mlp", {256, 784}, 256, false, 2},
    {"small_cnn", {64, 1, 28, 28}, 64, false, 2},
    {"resnet_stack", {32, 3, 16, 16}, 32, false, 1},
    {"transformer", {128, 16, 256}, 16, true, 1},
    {"lstm", {100, 28, 28}, 100, true, 1},
};

const Setting& setting_of(const std::string& name) {
  for (const Setting& s : kSettings)
    if (name == s.name) return s;
  std::fprintf(stderr, "bench_models: no model named %s\n", name.c_str());
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  g_threads = gb::get_num_threads();
  gb::set_num_threads(g_threads);
  torch::set_num_threads(1);
  gb::set_num_threads(g_threads);
  std::string only, trace_dir;  // one model's name, or all; --trace DIR: trace glassbox's models instead of timing
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--trace" && i + 1 < argc)
      trace_dir = argv[++i];
    else
      only = a;
  }
  auto wanted = [&](const char* name) { return only.empty() || only == name; };
  if (!trace_dir.empty()) {
    for (const char* m : {"tiny_mlp", "mlp", "small_cnn", "resnet_stack", "transformer", "lstm"})
      if (wanted(m)) {
        const Setting s = setting_of(m);
        gb::manual_seed(0);
        const std::string n = m;
        if (n == "tiny_mlp") trace_model(s, ours::tiny_mlp(), trace_dir);
        if (n == "mlp") trace_model(s, ours::mlp(), trace_dir);
        if (n == "small_cnn") trace_model(s, ours::small_cnn(), trace_dir);
        if (n == "resnet_stack") trace_model(s, ours::resnet_stack(), trace_dir);
        if (n == "transformer") trace_model(s, ours::EncoderClassifier(), trace_dir);
        if (n == "lstm") trace_model(s, ours::LSTMClassifier(), trace_dir);
      }
    return 0;
  }

  if (wanted("limits")) {
    auto [floor_s, flops] = mlp_gemm_floor();
    emit_limit("gemm_gflops_mlp_shapes", flops / floor_s / 1e9, "GFLOP/s",
               "\"mlp_step_gemm_floor_ms\": " + std::to_string(floor_s * 1e3) +
                   ", \"mlp_step_gflop\": " + std::to_string(flops / 1e9));
    emit_limit("stream_triad_gbs", bench::triad_gbs(g_threads), "GB/s", "\"threads\": " + std::to_string(g_threads));
  }
  for (const Setting& s : kSettings) {
    if (!wanted(s.name)) continue;
    gb::manual_seed(0);
    const std::string n = s.name;
    if (n == "tiny_mlp") bench_model(s, ours::tiny_mlp(), peer::tiny_mlp());
    if (n == "mlp") bench_model(s, ours::mlp(), peer::mlp());
    if (n == "small_cnn") bench_model(s, ours::small_cnn(), peer::small_cnn());
    if (n == "resnet_stack") bench_model(s, ours::resnet_stack(), peer::resnet_stack());
    if (n == "transformer") bench_model(s, ours::EncoderClassifier(), peer::EncoderClassifier());
    if (n == "lstm") bench_model(s, ours::LSTMClassifier(), peer::LSTMClassifier());
  }
  return 0;
}
