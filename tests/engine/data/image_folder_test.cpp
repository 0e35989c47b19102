// tests/engine/data/image_folder_test.cpp — engine/data/image_folder.cpp on PNGs written with stb_image_write.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "data_test_util.h"
#include "traces/temp_dir.h"

#include "image_writer.h"

namespace fs = std::filesystem;

namespace {
void png(const std::string& path, int w, int h, int c, uint8_t value) {
  std::vector<uint8_t> px(size_t(w * h * c), value);
  px[0] = 255;  // the top-left pixel, first channel, marks orientation
  REQUIRE(stbi_write_png(path.c_str(), w, h, c, px.data(), w * c));
}
}  // namespace

TEST_CASE("classes are sorted sub-folders, images sorted files; pixels arrive as (C,H,W) in [0,1]") {
  TempDir tmp;
  for (const char* c : {"dog", "cat"}) fs::create_directories(tmp.dir / c);
  png(tmp.file("dog/b.png"), 4, 3, 3, 51);
  png(tmp.file("dog/a.PNG"), 4, 3, 3, 102);
  png(tmp.file("cat/z.png"), 4, 3, 1, 0);
  std::ofstream(tmp.file("cat/notes.txt")) << "not an image";
  gb::data::datasets::ImageFolder ds(tmp.dir.string());
  CHECK(ds.classes() == std::vector<std::string>{"cat", "dog"});
  REQUIRE(ds.size() == 3);
  CHECK(ds.samples()[1].first == tmp.file("dog/a.PNG"));
  auto e = ds.get(1);
  CHECK(e.target.item<int64_t>() == 1);
  CHECK(e.data.sizes() == gb::IntArrayRef({3, 3, 4}));
  CHECK(e.data[0][0][0].item<float>() == 1.0f);
  CHECK(e.data[1][0][0].item<float>() == doctest::Approx(0.4));
  CHECK(ds.get(0).data.size(0) == 3);  // a grey file converted to RGB

  gb::data::datasets::ImageFolder grey(
      tmp.dir.string(), gb::data::ImageFolderOptions().channels(1).transform(gb::data::transforms::Normalize({0.5}, {0.5})));
  auto g = grey.get(0);  // cat/z.png, a grey file
  CHECK(g.data.sizes() == gb::IntArrayRef({1, 3, 4}));
  CHECK(g.data[0][0][0].item<float>() == 1.0f);  // (1 - 0.5) / 0.5

  gb::data::DataLoader loader(std::make_shared<gb::data::datasets::ImageFolder>(tmp.dir.string()),
                              gb::data::DataLoaderOptions().batch_size(3).num_workers(2));
  for (auto& b : loader) CHECK(b.data.sizes() == gb::IntArrayRef({3, 3, 3, 4}));
}

TEST_CASE("an undecodable file is named; a root without class folders says what is expected") {
  TempDir tmp;
  fs::create_directories(tmp.dir / "a");
  std::ofstream(tmp.file("a/broken.png")) << "\x89PNG not really";
  gb::data::datasets::ImageFolder ds(tmp.dir.string());
  CHECK_THROWS_WITH(ds.get(0), gbtest::contains("cannot decode image " + tmp.file("a/broken.png")));
  gb::data::DataLoader loader(std::make_shared<gb::data::datasets::ImageFolder>(tmp.dir.string()),
                              gb::data::DataLoaderOptions().num_workers(1));
  CHECK_THROWS_WITH(
      [&] {
        for (auto& b : loader) (void)b;
      }(),
      gbtest::contains("while loading batch 0: cannot decode image " + tmp.file("a/broken.png")));
  TempDir empty;
  CHECK_THROWS_WITH(gb::data::datasets::ImageFolder(empty.dir.string()),
                    gbtest::contains("couldn't find any class folder in"));
}
