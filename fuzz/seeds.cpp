// fuzz/seeds.cpp — fuzz_seeds DIR: the fuzzers' starting corpus, written by glassbox itself (nothing downloaded, no
// binary files in the repository): DIR/trace (a one-step synthetic trace), DIR/checkpoint (a safetensors state
// dict), DIR/dataset (an IDX file and a CSV file), DIR/image (a PNG, a BMP and a PGM, written with stb_image_write),
// DIR/config (GLASSBOX_ALLOC_CONF and GLASSBOX_ANOMALY_CONF values). Each fuzzer mutates from its folder.
#include <glassbox/glassbox.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>

#include "tools/synth.h"

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_seeds DIR  (writes DIR/trace, DIR/checkpoint, DIR/dataset)\n");
    return 2;
  }
  const fs::path dir = argv[1];
  for (const char* sub : {"trace", "checkpoint", "dataset", "image", "config"}) fs::create_directories(dir / sub);

  fs::remove(dir / "trace" / "synth.db");
  gb::tools::write_synthetic_trace((dir / "trace" / "synth.db").string(),
                                   {.steps = 1, .layers = 1, .ops_per_layer = 1, .workers = 1, .batch = 4, .width = 4});

  gb::manual_seed(0);
  gb::StateDict sd;
  sd.insert("fc.weight", gb::randn({3, 2}));
  sd.insert("fc.bias", gb::zeros({3}, gb::kDouble));
  gb::save(sd, (dir / "checkpoint" / "model.safetensors").string(), {{"step", "1"}});

  // IDX: magic (0, 0, type 0x08 = uint8, 3 dims), the dims big-endian, then the bytes.
  std::ofstream idx(dir / "dataset" / "images.idx", std::ios::binary);
  const unsigned char head[] = {0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 3};
  idx.write(reinterpret_cast<const char*>(head), sizeof head);
  for (int i = 0; i < 18; ++i) idx.put(static_cast<char>(i * 13));
  std::ofstream(dir / "dataset" / "table.csv") << "x,y,label\n1,2.5,0\n3,-1e3,1\n\"4\",0.125,2\n";

  unsigned char rgb[4 * 3 * 3];
  for (int i = 0; i < 36; ++i) rgb[i] = static_cast<unsigned char>(i * 7);
  if (!stbi_write_png((dir / "image" / "tiny.png").c_str(), 4, 3, 3, rgb, 4 * 3) ||
      !stbi_write_bmp((dir / "image" / "tiny.bmp").c_str(), 4, 3, 3, rgb)) {
    std::fprintf(stderr, "fuzz_seeds: cannot write the image seeds in %s\n", (dir / "image").c_str());
    return 1;
  }
  std::ofstream(dir / "image" / "tiny.pgm", std::ios::binary) << "P5\n4 3\n255\n" << std::string(12, '\x40');

  std::ofstream(dir / "config" / "alloc.txt") << "max_split_size_mb:128,capacity:80GiB,context:512MiB";
  std::ofstream(dir / "config" / "anomaly.txt") << "window=50,explode_factor=20.5,mode=raise,max_per_kind=3";
  return 0;
}
