// engine/data/image_folder.cpp — the ImageFolder index (sorted classes and files), and per-sample decoding.
#include "glassbox/data/image_folder.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "glassbox/ops/factory.h"

namespace gb::data::datasets {
namespace {
bool is_image(const std::filesystem::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* e : {".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tga", ".pgm", ".ppm"})
    if (ext == e) return true;
  return false;
}
}  // namespace

ImageFolder::ImageFolder(const std::string& root, ImageFolderOptions options) : options_(std::move(options)) {
  namespace fs = std::filesystem;
  std::error_code ec;
  GB_CHECK(fs::is_directory(root, ec), "ImageFolder: ", root, " is not a folder; expected root/<class>/<image>.png");
  for (const auto& e : fs::directory_iterator(root))
    if (e.is_directory()) classes_.push_back(e.path().filename().string());
  std::sort(classes_.begin(), classes_.end());
  GB_CHECK(!classes_.empty(), "ImageFolder: couldn't find any class folder in ", root,
           "; expected root/<class>/<image>.png");
  for (size_t c = 0; c < classes_.size(); ++c) {
    std::vector<std::string> files;
    for (const auto& e : fs::recursive_directory_iterator(fs::path(root) / classes_[c]))
      if (e.is_regular_file() && is_image(e.path())) files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    for (auto& f : files) samples_.emplace_back(std::move(f), int64_t(c));
  }
  GB_CHECK(!samples_.empty(), "ImageFolder: found no valid image file in the class folders of ", root,
           "; supported extensions are .png .jpg .jpeg .bmp .gif .tga .pgm .ppm");
}

Example<> ImageFolder::get(int64_t index) {
  GB_CHECK_INDEX(index >= 0 && index < size(), "ImageFolder: index ", index, " is out of range for ", size(),
                 " images");
  const auto& [path, cls] = samples_[size_t(index)];
  Tensor x = transforms::ToTensor()(read_image(path, options_.channels(), options_.max_pixels()));
  if (options_.transform()) x = options_.transform()(x);
  return {x, gb::tensor(cls)};
}

}  // namespace gb::data::datasets
