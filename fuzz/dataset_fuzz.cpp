// fuzz/dataset_fuzz.cpp — dataset files: the IDX reader (MNIST's format) and the CSV reader (header detection,
// quoting, numbers). Refusing with an exception is expected; a crash, a sanitizer report or a hang is a bug.
#include <glassbox/data/csv.h>
#include <glassbox/data/idx.h>

#include "fuzz/input_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = gb::fuzz::input_file(data, size, "input.data");
  gb::fuzz::read_or_refuse([&] { gb::data::read_idx(path); });
  gb::fuzz::read_or_refuse([&] { gb::data::read_csv(path); });
  return 0;
}
