// glassbox/data/idx.h — the IDX format (MNIST, Fashion-MNIST, KMNIST): read_idx, and the MNIST dataset.
//
// An IDX file is: two zero bytes, a type byte (0x08 ubyte, 0x09 byte, 0x0B int16, 0x0C int32, 0x0D float32,
// 0x0E float64), a byte with the number of dims, each dim as a big-endian int32, then the values, big-endian,
// row-major. Bad magic, a truncated or over-long file throws gb::Error naming the file and the byte offset.
//
//   gb::data::datasets::MNIST train("data/mnist");   // root/train-images-idx3-ubyte, root/train-labels-idx1-ubyte
//   train.get(0).data   // (1,28,28) float32 in [0,1];   .target: () int64
//   auto ds = gb::data::datasets::MNIST("data/mnist", gb::data::datasets::MNIST::Mode::kTest)
//                 .map(gb::data::transforms::Normalize<>(0.1307, 0.3081)).map(gb::data::transforms::Stack<>());
//
// MNIST is libtorch's (a datasets::Dataset<MNIST>, batch_dataset.h): make_data_loader and gb::data::DataLoader load
// it, .map() transforms it.
#pragma once

#include <string>

#include "glassbox/data/batch_dataset.h"

namespace gb::data {

// The file as a tensor of its dims: integer types as int32, float32 and float64 as themselves.
Tensor read_idx(const std::string& path);

namespace datasets {

// libtorch's torch::data::datasets::MNIST: images (N,1,H,W) scaled to [0,1], labels int64.
class MNIST : public Dataset<MNIST> {
 public:
  enum class Mode { kTrain, kTest };
  explicit MNIST(const std::string& root, Mode mode = Mode::kTrain);  // the standard file names under root
  MNIST(const std::string& images_file, const std::string& labels_file);
  Example<> get(size_t index) override;
  std::optional<size_t> size() const override { return static_cast<size_t>(images_.size(0)); }
  bool is_train() const noexcept { return train_; }
  const Tensor& images() const { return images_; }  // (N,1,H,W) float32
  const Tensor& targets() const { return targets_; }  // (N) int64

 private:
  Tensor images_, targets_;
  bool train_ = true;
};

}  // namespace datasets
}  // namespace gb::data
