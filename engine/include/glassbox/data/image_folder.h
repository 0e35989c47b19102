// glassbox/data/image_folder.h — torchvision's ImageFolder: root/<class>/<image>, decoded with stb_image.
//
// Classes are the sub-folders of root, sorted by name (class index = position); images are the files with an
// image extension (.png .jpg .jpeg .bmp .gif .tga .pgm .ppm, any case) in each, sorted by name. get() reads and
// decodes the file on the calling worker, converts it with ToTensor and applies the transform; a file that does
// not decode throws gb::Error naming it.
//
//   gb::data::datasets::ImageFolder ds("data/train", gb::data::ImageFolderOptions().channels(1));
//   ds.classes()   // {"cat", "dog"};  ds.get(0).data: (1,H,W) float32 in [0,1];  .target: () int64
#pragma once

#include <string>
#include <vector>

#include "glassbox/data/dataset.h"
#include "glassbox/data/transforms.h"
#include "glassbox/nn/options.h"

namespace gb::data {

struct ImageFolderOptions {
  GB_ARG(int, channels) = 3;                    // 1 grey, 3 RGB (torchvision's default loader converts to RGB), 4
  GB_ARG(transforms::ImageTransform, transform);     // applied after ToTensor
  GB_ARG(int64_t, max_pixels) = kMaxImagePixels;  // an image declaring more pixels is refused (PIL's limit)
};

namespace datasets {

class ImageFolder : public gb::data::Dataset<Example<>> {
 public:
  explicit ImageFolder(const std::string& root, ImageFolderOptions options = {});
  Example<> get(int64_t index) override;
  int64_t size() const override { return static_cast<int64_t>(samples_.size()); }
  const std::vector<std::string>& classes() const { return classes_; }
  const std::vector<std::pair<std::string, int64_t>>& samples() const { return samples_; }  // (path, class)

 private:
  std::vector<std::string> classes_;
  std::vector<std::pair<std::string, int64_t>> samples_;
  ImageFolderOptions options_;
};

}  // namespace datasets
}  // namespace gb::data
