// bench/bench_elementwise.cpp — elementwise ops and the whole-tensor sum against libtorch, float32 contiguous, at
// 4K, 64K, 256K and 4M elements (L1, L2, the L3 here, memory), on one thread and on all: the per-op path and the
// pool's hand-off (small sizes), the vector width (middle), bandwidth (large). Ops: add, add_ with alpha (in place),
// mul by a scalar, relu, copy_, sum, exp, tanh, sigmoid, GELU (exact) and GELU's gradient through autograd.
// One JSON line per (op, size, threads): value = glassbox us, peer_value = libtorch us.
// Then reductions over a 4096 x 1024 matrix in each layout the reduction driver has (rows, columns, one long run, a
// transpose's rows in memory as columns) and group_norm's forward, on all threads: reduce_<op>_us lines.
#include <glassbox/glassbox.h>
#include <torch/torch.h>

#include <functional>
#include <string>

#include "bench_common.h"

int main() {
  const int all = gb::get_num_threads();
  for (int threads : {1, all}) {
    gb::set_num_threads(threads);
    torch::set_num_threads(threads);
    for (int64_t n : {int64_t(4096), int64_t(65536), int64_t(262144), int64_t(4194304)}) {
      gb::manual_seed(0);
      gb::Tensor a = gb::randn({n}), b = gb::randn({n}), o = gb::empty({n});
      torch::Tensor ta = torch::from_blob(a.data_ptr<float>(), {n}, torch::kFloat).clone();
      torch::Tensor tb = torch::from_blob(b.data_ptr<float>(), {n}, torch::kFloat).clone();
      torch::Tensor to = torch::empty({n});
      gb::Tensor ga = a.clone().requires_grad_();
      torch::Tensor tga = ta.clone().requires_grad_();
      struct Case {
        const char* name;
        std::function<void()> ours, theirs;
      };
      const Case cases[] = {
          {"add", [&] { (void)(a + b); }, [&] { (void)(ta + tb); }},
          {"add_alpha_inplace", [&] { o.add_(b, 0.5); }, [&] { to.add_(tb, 0.5); }},
          {"mul_scalar", [&] { (void)(a * 0.5); }, [&] { (void)(ta * 0.5); }},
          {"relu", [&] { (void)a.relu(); }, [&] { (void)ta.relu(); }},
          {"copy_", [&] { o.copy_(a); }, [&] { to.copy_(ta); }},
          {"sum", [&] { (void)a.sum(); }, [&] { (void)ta.sum(); }},
          {"exp", [&] { (void)a.exp(); }, [&] { (void)ta.exp(); }},
          {"tanh", [&] { (void)a.tanh(); }, [&] { (void)ta.tanh(); }},
          {"sigmoid", [&] { (void)a.sigmoid(); }, [&] { (void)ta.sigmoid(); }},
          {"gelu", [&] { (void)gb::gelu(a); }, [&] { (void)torch::gelu(ta); }},
          {"gelu_fwd_bwd",
           [&] {
             ga.mutable_grad() = gb::Tensor();
             gb::gelu(ga).backward(b);
           },
           [&] {
             tga.mutable_grad() = torch::Tensor();
             torch::gelu(tga).backward(tb);
           }},
      };
      for (const Case& c : cases) {
        auto [t, peer] = bench::compare(c.ours, c.theirs, n <= 65536 ? 100 : 5, 0.15);
        bench::emit("elementwise", std::string(c.name) + "_" + std::to_string(n) + "_us", t * 1e6, "us", peer * 1e6,
                    "\"threads\": " + std::to_string(threads) + ", \"elements\": " + std::to_string(n));
      }
    }
  }
  // the reductions' layouts, on all threads
  gb::set_num_threads(all);
  torch::set_num_threads(all);
  gb::NoGradGuard no_grad;
  torch::NoGradGuard t_no_grad;
  gb::manual_seed(0);
  gb::Tensor m = gb::randn({4096, 1024});
  torch::Tensor tm = torch::from_blob(m.data_ptr<float>(), {4096, 1024}, torch::kFloat).clone();
  gb::Tensor x4 = gb::randn({64, 32, 28, 28}), w = gb::randn({32}), bias = gb::randn({32});
  torch::Tensor tx4 = torch::from_blob(x4.data_ptr<float>(), {64, 32, 28, 28}, torch::kFloat).clone();
  torch::Tensor tw = torch::from_blob(w.data_ptr<float>(), {32}, torch::kFloat).clone();
  torch::Tensor tbias = torch::from_blob(bias.data_ptr<float>(), {32}, torch::kFloat).clone();
  struct Reduction {
    const char* name;
    std::function<void()> ours, theirs;
  };
  const Reduction reductions[] = {
      {"var_rows", [&] { (void)m.var(1); }, [&] { (void)tm.var(1); }},
      {"std_rows", [&] { (void)m.std(1); }, [&] { (void)tm.std(1); }},
      {"var_all", [&] { (void)m.var(); }, [&] { (void)tm.var(); }},
      {"var_columns", [&] { (void)m.var(0); }, [&] { (void)tm.var(0); }},
      {"amax_rows", [&] { (void)m.amax(1); }, [&] { (void)tm.amax(1); }},
      {"amax_columns", [&] { (void)m.amax(0); }, [&] { (void)tm.amax(0); }},
      {"sum_columns", [&] { (void)m.sum(0); }, [&] { (void)tm.sum(0); }},
      {"mean_transposed_rows", [&] { (void)m.t().mean(1); }, [&] { (void)tm.t().mean(1); }},
      {"group_norm_64x32x28x28_g8", [&] { (void)gb::group_norm(x4, 8, w, bias); },
       [&] { (void)torch::group_norm(tx4, 8, tw, tbias); }},
  };
  for (const Reduction& r : reductions) {
    auto [t, peer] = bench::compare(r.ours, r.theirs, 3, 0.3);
    bench::emit("elementwise", std::string("reduce_") + r.name + "_us", t * 1e6, "us", peer * 1e6,
                "\"threads\": " + std::to_string(all));
  }
  return 0;
}
