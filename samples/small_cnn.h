// samples/small_cnn.h — the small CNN of train_images (and of the backward-phases lesson): conv 3x3 (8) - batch norm -
// relu - maxpool 2 - conv 3x3 (16) - batch norm - relu - maxpool 2 - linear, for (N, 1, S, S) images, S a multiple
// of 4.
#pragma once

#include <glassbox/glassbox.h>

namespace sample_models {

struct SmallNetImpl : gb::nn::Module {
  SmallNetImpl(int64_t image, int64_t classes) {
    conv1 = register_module("conv1", gb::nn::Conv2d(gb::nn::Conv2dOptions(1, 8, 3).padding(1)));
    bn1 = register_module("bn1", gb::nn::BatchNorm2d(8));
    conv2 = register_module("conv2", gb::nn::Conv2d(gb::nn::Conv2dOptions(8, 16, 3).padding(1)));
    bn2 = register_module("bn2", gb::nn::BatchNorm2d(16));
    fc = register_module("fc", gb::nn::Linear(16 * (image / 4) * (image / 4), classes));
  }
  gb::Tensor forward(const gb::Tensor& x) {  // x (N,1,S,S) -> logits (N,classes)
    namespace F = gb::nn::functional;
    auto h = F::max_pool2d(F::relu(bn1(conv1(x))), F::MaxPool2dFuncOptions(2));
    h = F::max_pool2d(F::relu(bn2(conv2(h))), F::MaxPool2dFuncOptions(2));
    return fc(h.flatten(1));
  }
  gb::nn::Conv2d conv1{nullptr}, conv2{nullptr};
  gb::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr};
  gb::nn::Linear fc{nullptr};
};
GB_MODULE(SmallNet);

}  // namespace sample_models
