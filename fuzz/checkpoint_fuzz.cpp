// fuzz/checkpoint_fuzz.cpp — checkpoint files a user was handed: gb::load and gb::load_metadata (safetensors, by
// content), and gb::load_pt (PyTorch's zip + restricted pickle). Refusing with an exception is expected; a crash,
// a sanitizer report, a hang or an allocation the file's size cannot justify is a bug.
#include <glassbox/io/serialize.h>

#include "fuzz/input_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = gb::fuzz::input_file(data, size, "input.ckpt");
  gb::fuzz::read_or_refuse([&] { gb::load(path); });
  gb::fuzz::read_or_refuse([&] { gb::load_metadata(path); });
  gb::fuzz::read_or_refuse([&] { gb::load_pt(path); });
  return 0;
}
