// fuzz/image_fuzz.cpp — an image a dataset folder may hold: ImageFolder lists it and get() decodes it (stb_image:
// PNG, JPEG, BMP, GIF, TGA, PNM, by content) into a tensor, in grey and in RGBA. Refusing with an exception is
// expected; a crash, a sanitizer report, a hang or a runaway allocation is a bug. Images are held to 2^22 pixels
// (max_pixels; PIL's default limit is 178,956,970): decoding a genuine large image is slow, not a bug, and a fuzzer
// that spends seconds on one input finds nothing else.
#include <glassbox/data/image_folder.h>

#include "fuzz/input_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  gb::fuzz::input_file(data, size, "images/class_a/x.png");
  const std::string root = (gb::fuzz::scratch_dir() / "images").string();
  for (int channels : {1, 4})
    gb::fuzz::read_or_refuse([&] {
      gb::data::datasets::ImageFolder folder(root, gb::data::ImageFolderOptions().channels(channels).max_pixels(int64_t(1) << 22));
      if (folder.size() > 0) folder.get(0);
    });
  return 0;
}
