// fuzz/seeds.cpp — fuzz_seeds DIR: the fuzzers' starting corpus, written by glassbox itself (nothing downloaded, no
// binary files in the repository): DIR/trace (a one-step synthetic trace, and a long run's: schema version 5's
// summary columns, step_memory, detail windows with resume/live memory events, shed and disk-full meta), DIR/checkpoint (a safetensors state
// dict), DIR/dataset (an IDX file and a CSV file), DIR/image (a PNG, a BMP and a PGM, written with stb_image_write),
// DIR/config (GLASSBOX_ALLOC_CONF and GLASSBOX_ANOMALY_CONF values). Each fuzzer mutates from its folder.
#include <glassbox/glassbox.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>

#include "tools/synth.h"
#include "traces/writer.h"

namespace fs = std::filesystem;

namespace {

// A long run's trace, small: 6 steps of 10 ms, detail in steps 0-1 (first) and 4-5 (end), every summary row.
void write_long_run(const std::string& path) {
  using namespace gb::trace;
  Writer w(path);
  w.set_meta("detail", "first=2,every=100,window=2,recorder=2,recorder_mb=8");
  w.set_meta("pid", "1");
  w.set_meta("dropped_events", "3");
  w.set_meta("shed_events.span", "3");
  w.set_meta("events_outside_detail", "40");
  w.set_meta("recorder_dumps", "1");
  w.set_meta("stopped_by", "disk full");
  w.set_meta("disk_full", "step 5: No space left on device");
  w.add(ThreadRecord{1, 100, "main", ThreadRole::main, std::nullopt});
  const Id op = w.intern("mm");
  constexpr std::int64_t kStep = 10'000'000;
  std::int64_t span = 0, event = 0;
  for (std::int64_t s = 0; s < 6; ++s) {
    StepRecord r;
    r.step = s;
    r.start_ns = s * kStep;
    r.end_ns = (s + 1) * kStep;
    r.loss = 1.0 / static_cast<double>(s + 1);
    r.data_ns = 1'000'000;
    r.forward_ns = 3'000'000;
    r.backward_ns = 4'000'000;
    r.optimizer_ns = 2'000'000;
    r.samples = 32;
    r.grad_norm = 0.5;
    w.add(r);
    StepMemoryRecord m;
    m.step = s;
    m.device = 0;
    m.allocated_peak = m.activation_peak = 4096 + s;
    m.reserved_peak = 8192;
    w.add(m);
    if (s == 2 || s == 3) continue;  // no detail
    if (s == 4) {  // the end window resumes: what was live then
      MemoryEventRecord e;
      e.id = ++event;
      e.t_ns = s * kStep;
      e.action = MemAction::resume;
      e.device = 0;
      w.add(e);
      e.id = ++event;
      e.action = MemAction::live;
      e.addr = 0x1000;
      e.size = 512;
      w.add(e);
    }
    SpanRecord sp;
    sp.id = span_id(1, ++span);
    sp.name_id = op;
    sp.thread_id = 1;
    sp.start_ns = s * kStep + 1000;
    sp.end_ns = s * kStep + 5000;
    sp.step = s;
    w.add(sp);
    w.add(OpDetailsRecord{sp.id, std::nullopt, std::nullopt, 0, 128, 64});
    MemoryEventRecord a;
    a.id = ++event;
    a.t_ns = s * kStep + 2000;
    a.action = MemAction::alloc;
    a.device = 0;
    a.addr = 0x2000;
    a.size = 64;
    a.category = MemCategory::activation;
    w.add(a);
    a.id = ++event;
    a.t_ns = s * kStep + 4000;
    a.action = MemAction::free;
    w.add(a);
    if (s == 1 || s == 5) {
      DetailWindowRecord d;
      d.id = s == 1 ? 1 : 2;
      d.first_step = s - 1;
      d.last_step = s;
      d.start_ns = (s - 1) * kStep;
      d.end_ns = (s + 1) * kStep;
      d.reason = s == 1 ? DetailReason::first : DetailReason::end;
      w.add(d);
    }
  }
  w.close();
}

}  // namespace

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
  fs::remove(dir / "trace" / "long_run.db");
  write_long_run((dir / "trace" / "long_run.db").string());

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
