// bench/bench_dataloader.cpp — DataLoader throughput on an image-folder pipeline against the same work by hand.
//
// Writes a temp folder of 320 small PNGs (32x32 RGB, 4 classes), then times one epoch (batch 32: 10 batches) of
// ImageFolder -> ToTensor -> Normalize -> collate, two ways, alternating rounds:
//   ours: gb::data::DataLoader with num_workers 0, 1, 2 (tracing off)
//   peer: the "hand loop": the same dataset gets and gb::data::collate called in order on one thread.
// metric batches_per_s; ratio = ours / peer (num_workers 0: the loader machinery's overhead; target >= 0.95).
// libtorch's loader is not the peer here: its datasets do no image decoding, so the same pipeline cannot run in it.
#include <glassbox/data/data.h>
#include <glassbox/glassbox.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>

#include "bench_common.h"

#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>

namespace fs = std::filesystem;

int main() {
  std::string tmpl = (fs::temp_directory_path() / "glassbox-bench-images-XXXXXX").string();
  fs::path root = mkdtemp(tmpl.data());
  gb::Generator g(0);
  const int W = 32, H = 32, N = 320;
  for (int i = 0; i < N; ++i) {
    fs::path dir = root / ("class" + std::to_string(i % 4));
    fs::create_directories(dir);
    std::vector<uint8_t> px(W * H * 3);
    for (auto& p : px) p = uint8_t(g.next_u64() & 0xff);
    stbi_write_png((dir / ("img" + std::to_string(1000 + i) + ".png")).c_str(), W, H, 3, px.data(), W * 3);
  }
  namespace T = gb::data::transforms;
  auto ds = std::make_shared<gb::data::datasets::ImageFolder>(
      root.string(), gb::data::ImageFolderOptions().transform(T::Normalize({0.5, 0.5, 0.5}, {0.25, 0.25, 0.25})));
  const int64_t B = 32, batches = (N + B - 1) / B;

  auto hand = [&] {
    for (int64_t b = 0; b < batches; ++b) {
      std::vector<gb::data::Example<>> s;
      for (int64_t i = b * B; i < std::min<int64_t>(N, (b + 1) * B); ++i) s.push_back(ds->get(i));
      gb::data::Example<> batch = gb::data::collate(std::move(s));
      if (batch.data.size(0) == 0) std::abort();
    }
  };
  for (int64_t workers : {0, 1, 2}) {
    gb::data::DataLoader loader(ds, gb::data::DataLoaderOptions().batch_size(B).num_workers(workers)
                                        .persistent_workers(workers > 0));
    auto ours = [&] {
      int64_t n = 0;
      for (auto& b : loader) n += b.data.size(0) > 0;
      if (n != batches) std::abort();
    };
    auto [t_ours, t_hand] = bench::compare(ours, hand, 1, 0.6, 5);
    double ours_bps = batches / t_ours, hand_bps = batches / t_hand;
    std::printf("{\"bench\": \"dataloader_image_folder\", \"metric\": \"batches_per_s\", \"num_workers\": %lld, "
                "\"value\": %.4g, \"unit\": \"batches/s\", \"peer\": \"hand loop\", \"peer_value\": %.4g, "
                "\"ratio\": %.4f, \"images\": %d, \"batch_size\": %lld, \"threads\": %d}\n",
                (long long)workers, ours_bps, hand_bps, ours_bps / hand_bps, N, (long long)B, gb::get_num_threads());
    std::fflush(stdout);
  }
  fs::remove_all(root);
  return 0;
}
