// bench/bench_training.cpp — the pieces of a training loop that [Training] added, each against libtorch in the same
// process (same thread count for GEMM, libtorch's intra-op pool at 1 thread, its fastest setting here):
//   module_call        a Linear(16, 16) called on one row through its holder (hooks checked, module scope opened):
//                      what a module call costs over the op itself;
//   adamw_step         AdamW.step() on 4M parameters in 4 tensors (gradients present);
//   encoder_layer_step one training step of a TransformerEncoderLayer (d_model 128, 4 heads, ff 512, dropout 0,
//                      post-norm: libtorch 1.13 has no norm_first), seq 64 x batch 16: forward, backward, AdamW.
#include <glassbox/glassbox.h>
#include <torch/torch.h>

#include "bench_common.h"

int main() {
  const int threads = gb::get_num_threads();
  gb::set_num_threads(threads);
  torch::set_num_threads(1);
  gb::set_num_threads(threads);  // OpenBLAS count again (one shared library)
  gb::manual_seed(0);
  torch::manual_seed(0);

  {  // module_call
    gb::nn::Linear fc(16, 16);
    auto x = gb::randn({1, 16});
    torch::nn::Linear tfc(16, 16);
    auto tx = torch::randn({1, 16});
    gb::NoGradGuard ng;
    torch::NoGradGuard tng;
    auto [ours, peer] = bench::compare([&] { fc(x); }, [&] { tfc(tx); }, 1000, 0.5);
    auto [raw, peer_raw] = bench::compare([&] { gb::linear(x, fc->weight, fc->bias); },
                                          [&] { torch::linear(tx, tfc->weight, tfc->bias); }, 1000, 0.5);
    bench::emit("training", "module_call_us_linear16", ours * 1e6, "us", peer * 1e6,
                "\"op_alone_us\": " + std::to_string(raw * 1e6) + ", \"libtorch_op_alone_us\": " +
                    std::to_string(peer_raw * 1e6));
  }

  {  // adamw_step
    std::vector<gb::Tensor> params;
    std::vector<torch::Tensor> tparams;
    for (int i = 0; i < 4; ++i) {
      params.push_back(gb::randn({1024, 1024}).requires_grad_());
      params.back().mutable_grad() = gb::randn({1024, 1024});
      tparams.push_back(torch::randn({1024, 1024}).requires_grad_());
      tparams.back().mutable_grad() = torch::randn({1024, 1024});
    }
    gb::optim::AdamW opt(params, gb::optim::AdamWOptions(1e-3));
    torch::optim::AdamW topt(tparams, torch::optim::AdamWOptions(1e-3));
    auto [ours, peer] = bench::compare([&] { opt.step(); }, [&] { topt.step(); }, 2, 1.0);
    bench::emit("training", "adamw_step_ms_4M_params", ours * 1e3, "ms", peer * 1e3);
  }

  {  // encoder_layer_step
    const int64_t S = 64, B = 16, D = 128;
    gb::nn::TransformerEncoderLayer layer(gb::nn::TransformerEncoderLayerOptions(D, 4).dim_feedforward(4 * D).dropout(0.0));
    gb::optim::AdamW opt(layer->parameters(), gb::optim::AdamWOptions(1e-4));
    auto x = gb::randn({S, B, D});
    torch::nn::TransformerEncoderLayer tlayer(torch::nn::TransformerEncoderLayerOptions(D, 4).dim_feedforward(4 * D).dropout(0.0));
    torch::optim::AdamW topt(tlayer->parameters(), torch::optim::AdamWOptions(1e-4));
    auto tx = torch::randn({S, B, D});
    auto ours_step = [&] {
      auto loss = layer(x).square().mean();
      opt.zero_grad();
      loss.backward();
      opt.step();
    };
    auto torch_step = [&] {
      auto loss = tlayer(tx).square().mean();
      topt.zero_grad();
      loss.backward();
      topt.step();
    };
    auto [ours, peer] = bench::compare(ours_step, torch_step, 3, 1.5);
    bench::emit("training", "encoder_layer_step_ms_s64_b16_d128", ours * 1e3, "ms", peer * 1e3,
                "\"threads\": " + std::to_string(threads));
  }
  return 0;
}
