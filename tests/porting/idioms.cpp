// tests/porting/idioms.cpp — everyday libtorch idioms, each written as libtorch code writes it, each checked. It is
// never compiled as it stands: tests/CMakeLists.txt renames a copy with tools/port.sh and builds it against
// glassbox; CTest runs it. Each idiom is a function that returns normally or fails a TORCH_CHECK naming it.
#include <torch/torch.h>

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
  training_idioms();
  std::cout << "all idioms compiled and ran" << std::endl;
  return 0;
}
