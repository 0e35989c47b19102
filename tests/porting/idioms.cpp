// tests/porting/idioms.cpp — everyday libtorch idioms, each written as libtorch code writes it, each checked. It is
// never compiled as it stands: tests/CMakeLists.txt renames a copy with tools/port.sh and builds it against
// glassbox; CTest runs it. Each idiom is a function that returns normally or fails a TORCH_CHECK naming it.
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <tuple>
#include <vector>

namespace {

// A sequence classifier: an embedding-free LSTM over features, the last step's state into a Linear.
struct SequenceNetImpl : torch::nn::Module {
  SequenceNetImpl()
      : conv(torch::nn::Conv1dOptions(4, 8, 3).padding(1)),
        pool(torch::nn::MaxPool1dOptions(2)),
        lstm(torch::nn::LSTMOptions(8, 16).num_layers(2).batch_first(true)),
        head(16, 3) {
    register_module("conv", conv);
    register_module("pool", pool);
    register_module("lstm", lstm);
    register_module("head", head);
  }
  torch::Tensor forward(torch::Tensor x) {  // x (N, 4, L)
    x = pool(torch::relu(conv(x)));         // (N, 8, L/2)
    auto out = lstm(x.transpose(1, 2));     // (N, L/2, 16)
    torch::Tensor h_n = std::get<0>(std::get<1>(out));
    return head(h_n[-1]);
  }
  torch::nn::Conv1d conv;
  torch::nn::MaxPool1d pool;
  torch::nn::LSTM lstm;
  torch::nn::Linear head;
};
TORCH_MODULE(SequenceNet);

void device_and_dtype_idioms() {
  torch::Device device(torch::kCPU);
  TORCH_CHECK(device.type() == torch::kCPU && !device.has_index(), "Device::type()");
  torch::Tensor x = torch::ones({2, 2}, torch::TensorOptions().dtype(torch::kFloat32).device(device));
  TORCH_CHECK(x.device().type() == torch::DeviceType::CPU, "tensor.device().type()");
  TORCH_CHECK(x.to(torch::kLong).scalar_type() == c10::ScalarType::Long, "ScalarType::Long");
  TORCH_CHECK(std::string(c10::toString(x.scalar_type())) == "Float", "c10::toString");
}

void tensor_idioms() {
  torch::Tensor m = torch::zeros({3, 4});
  auto a = m.accessor<float, 2>();
  for (int64_t i = 0; i < a.size(0); ++i)
    for (int64_t j = 0; j < a.size(1); ++j) a[i][j] = static_cast<float>(i * 10 + j);
  TORCH_CHECK(m[2][3].item<float>() == 23.0f, "accessor writes");
  using namespace torch::indexing;
  m.index_put_({Slice(), 0}, -1);
  m.index_put_({0, Slice(1, None)}, torch::tensor({7.0f, 8.0f, 9.0f}));
  TORCH_CHECK(m[1][0].item<float>() == -1.0f && m[0][3].item<float>() == 9.0f, "index_put_");
  auto [values, indices] = torch::topk(torch::tensor({3.0, 1.0, 4.0, 1.0, 5.0}), 2);
  TORCH_CHECK(indices[0].item<int64_t>() == 4 && values[1].item<double>() == 4.0, "topk");
  TORCH_CHECK(torch::cumsum(torch::arange(4), 0)[3].item<int64_t>() == 6, "cumsum");
  TORCH_CHECK(torch::flip(torch::arange(3), {0})[0].item<int64_t>() == 2, "flip");
  TORCH_CHECK(torch::arange(2).repeat({3}).numel() == 6, "repeat");
  TORCH_CHECK(torch::masked_select(torch::arange(5), torch::arange(5) > 2).numel() == 2, "masked_select");
  TORCH_CHECK(torch::nn::functional::pad(torch::ones({1, 2}), torch::nn::functional::PadFuncOptions({1, 1})).size(1) == 4,
              "F::pad");
}

// An 8-bit RGB image in HWC bytes, as every image loader hands it over: into a normalized CHW float tensor and back.
void image_byte_idioms() {
  std::vector<uint8_t> pixels(4 * 5 * 3);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(i * 37 % 256);
  torch::Tensor hwc = torch::from_blob(pixels.data(), {4, 5, 3}, torch::kByte);
  TORCH_CHECK(hwc.scalar_type() == torch::kUInt8 && hwc.element_size() == 1, "from_blob kByte");
  torch::Tensor chw = hwc.permute({2, 0, 1}).to(torch::kFloat32).div(255.0);
  TORCH_CHECK(std::abs(chw[1][0][0].item<float>() - 37.0f / 255.0f) < 1e-6f, "bytes to normalized floats");
  torch::Tensor back = chw.mul(255).round().clamp(0, 255).to(torch::kU8).permute({1, 2, 0}).contiguous();
  TORCH_CHECK(std::equal(pixels.begin(), pixels.end(), back.data_ptr<uint8_t>()), "floats back to the same bytes");
  TORCH_CHECK((hwc + 200)[0][0][1].item<int>() == (37 + 200) % 256, "uint8 arithmetic wraps as in libtorch");
  TORCH_CHECK(hwc.sum().scalar_type() == torch::kLong, "a byte tensor sums to int64");
  torch::Tensor signed_bytes = torch::tensor({-3, 4}).to(torch::kInt8);
  TORCH_CHECK((signed_bytes + hwc.flatten().slice(0, 0, 2)).scalar_type() == torch::kInt16, "int8 + uint8 is int16");
  TORCH_CHECK(torch::tensor({1, 2}, torch::kShort).scalar_type() == torch::kInt16, "kShort");
}

// Boolean masks and index tensors, as data-cleaning and sampling code uses them.
void tensor_index_idioms() {
  using namespace torch::indexing;
  torch::Tensor x = torch::arange(12, torch::kFloat).view({3, 4}) - 5;
  TORCH_CHECK(x.index({x > 0}).numel() == 6, "index with a mask");
  torch::Tensor clipped = x.clone();
  clipped.index_put_({clipped < 0}, 0);
  TORCH_CHECK(clipped.min().item<float>() == 0.0f, "index_put_ with a mask");
  torch::Tensor rows = x.index({torch::tensor({2, 0})});
  TORCH_CHECK(rows.size(0) == 2 && rows[0][0].item<float>() == 3.0f, "index with an index tensor");
  torch::Tensor picked = x.index({Slice(), torch::tensor({1, 3})});
  TORCH_CHECK(picked.sizes() == torch::IntArrayRef({3, 2}), "slice and index tensor");
  torch::Tensor counts = torch::zeros({4});
  counts.index_put_({torch::tensor({1, 1, 3})}, torch::ones({3}), /*accumulate=*/true);
  TORCH_CHECK(counts[1].item<float>() == 2.0f, "index_put_ accumulate");
  TORCH_CHECK(x.nonzero().size(0) == 11, "nonzero");
  TORCH_CHECK(x[torch::tensor(1)][0].item<float>() == -1.0f, "x[0-dim tensor]");
}

// A DQN-style target network: a Cloneable module, cloned and trained apart.
struct QNetImpl : torch::nn::Cloneable<QNetImpl> {
  QNetImpl() { reset(); }
  void reset() override {
    body = register_module("body", torch::nn::Sequential(torch::nn::Linear(4, 16), torch::nn::ReLU()));
    head = register_module("head", torch::nn::Linear(16, 2));
  }
  torch::Tensor forward(torch::Tensor x) { return head(body->forward(x)); }
  torch::nn::Sequential body{nullptr};
  torch::nn::Linear head{nullptr};
};
TORCH_MODULE(QNet);

void clone_and_archive_idioms() {
  torch::manual_seed(1);
  QNet online;
  auto target = std::dynamic_pointer_cast<QNetImpl>(online->clone());
  torch::Tensor x = torch::randn({3, 4});
  TORCH_CHECK(torch::allclose(online->forward(x), target->forward(x)), "a clone computes the same");
  torch::optim::SGD opt(online->parameters(), 0.5);
  online->forward(x).sum().backward();
  opt.step();
  TORCH_CHECK(!torch::allclose(online->forward(x), target->forward(x)), "training the original leaves the clone");
  torch::nn::Linear layer(3, 2);
  auto layer_copy = std::dynamic_pointer_cast<torch::nn::LinearImpl>(layer->clone());
  TORCH_CHECK(layer_copy->weight.data_ptr() != layer->weight.data_ptr(), "a built-in module clones");

  const std::string path = "idioms_archive.pt";
  torch::serialize::OutputArchive out;
  online->save(out);
  out.write("step", c10::IValue(int64_t(7)));
  out.save_to(path);
  QNet restored;
  torch::serialize::InputArchive in;
  in.load_from(path);
  restored->load(in);
  c10::IValue step;
  in.read("step", step);
  TORCH_CHECK(step.toInt() == 7, "an IValue through an archive");
  TORCH_CHECK(torch::allclose(restored->forward(x), online->forward(x)), "Module::save / load through archives");
  torch::save(x, "idioms_tensor.pt");
  torch::Tensor y;
  torch::load(y, "idioms_tensor.pt");
  TORCH_CHECK(torch::equal(x, y), "torch::save / torch::load of a tensor");
  std::remove(path.c_str());
  std::remove("idioms_tensor.pt");
}

void training_idioms() {
  torch::manual_seed(0);
  SequenceNet net;
  torch::optim::Adam optimizer(net->parameters(), torch::optim::AdamOptions(1e-2));
  // Three classes told apart by the sign pattern of the first feature over time.
  torch::Tensor x = torch::randn({48, 4, 8});
  torch::Tensor y = torch::zeros({48}, torch::kLong);
  for (int64_t i = 0; i < 48; ++i) {
    y[i] = i % 3;
    x[i][0] += static_cast<double>(i % 3) * 2.0 - 2.0;
  }
  auto data = torch::data::datasets::TensorDataset(x);
  auto loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
      std::move(data).map(torch::data::transforms::Stack<torch::data::TensorExample>()), 16);
  float first = 0, last = 0;
  for (int epoch = 0; epoch < 30; ++epoch) {
    int64_t offset = 0;
    for (auto& batch : *loader) {
      const int64_t n = batch.data.size(0);
      optimizer.zero_grad();
      auto loss = torch::nn::functional::cross_entropy(net->forward(batch.data), y.narrow(0, offset, n));
      loss.backward();
      optimizer.step();
      offset += n;
      if (epoch == 0 && offset == n) first = loss.item<float>();
      last = loss.item<float>();
    }
  }
  std::cout << "sequence classifier: loss " << first << " -> " << last << std::endl;
  TORCH_CHECK(last < 0.5f * first, "an LSTM classifier trained through make_data_loader lowers its loss");
  torch::nn::Sequential seq(torch::nn::Linear(3, 4), torch::nn::Functional(torch::relu),
                            torch::nn::Dropout(0.0), torch::nn::Functional(torch::sigmoid));
  TORCH_CHECK(seq->forward(torch::ones({2, 3})).size(1) == 4, "Sequential with Functional");
}

}  // namespace

int main() {
  device_and_dtype_idioms();
  tensor_idioms();
  image_byte_idioms();
  tensor_index_idioms();
  clone_and_archive_idioms();
  training_idioms();
  std::cout << "all idioms compiled and ran" << std::endl;
  return 0;
}
