// samples/lessons/state_dict_strict.cpp — loading a state dict into a model that changed, and a dict saved through
// DataParallel.
//
// The claims (PyTorch's "Saving and loading models" tutorial and the load_state_dict docs): strict loading (the
// default) of a state dict into a model whose layers changed fails with an error that lists the missing and the
// unexpected keys; strict=false loads what matches and returns those lists. A model saved while wrapped in
// nn.DataParallel / DDP has every key prefixed with "module.", so it does not load into the bare model until the
// prefix is stripped (torch.nn.modules.utils.consume_prefix_in_state_dict_if_present; gb::strip_prefix).
//
// The lesson saves a Net (encoder, head) to a safetensors file, loads it into a changed Net (head renamed to
// classifier, a LayerNorm added), strictly then not, and prints the error and the key lists; then saves the Net
// wrapped as `module`, loads that file strictly into a bare Net (it fails) and again after strip_prefix, and
// compares the outputs. The files go to a temporary folder that is removed.
//
//   ./build/samples/lessons/lesson_state_dict_strict
#include <glassbox/glassbox.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "lesson.h"

namespace {

struct NetImpl : gb::nn::Module {
  NetImpl() {
    encoder = register_module("encoder", gb::nn::Linear(4, 8));
    head = register_module("head", gb::nn::Linear(8, 3));
  }
  gb::Tensor forward(const gb::Tensor& x) { return head(gb::relu(encoder(x))); }
  gb::nn::Linear encoder{nullptr}, head{nullptr};
};
GB_MODULE(Net);

// The next version of the model: head renamed to classifier, a LayerNorm added.
struct NetV2Impl : gb::nn::Module {
  NetV2Impl() {
    encoder = register_module("encoder", gb::nn::Linear(4, 8));
    norm = register_module("norm", gb::nn::LayerNorm(std::vector<int64_t>{8}));
    classifier = register_module("classifier", gb::nn::Linear(8, 3));
  }
  gb::Tensor forward(const gb::Tensor& x) { return classifier(norm(gb::relu(encoder(x)))); }
  gb::nn::Linear encoder{nullptr};
  gb::nn::LayerNorm norm{nullptr};
  gb::nn::Linear classifier{nullptr};
};
GB_MODULE(NetV2);

// What nn.DataParallel(net) looks like to state_dict(): the model registered as "module".
struct WrappedImpl : gb::nn::Module {
  explicit WrappedImpl(Net net) { module = register_module("module", net); }
  Net module{nullptr};
};
GB_MODULE(Wrapped);

std::string list(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& k : v) s += (s.empty() ? "" : ", ") + k;
  return s.empty() ? "(none)" : s;
}

// The message of the gb::Error strict loading throws, "" when it loads.
template <class F>
std::string error_of(F load) {
  try {
    load();
  } catch (const gb::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

int main() {
  lesson::Lesson lesson("state_dict_strict",
                        "strict load_state_dict of a changed model fails listing the missing and unexpected keys "
                        "(strict=false returns them); a DataParallel-saved dict loads once its `module.` prefix is "
                        "stripped");
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("lesson_state_dict_strict_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string plain = (dir / "net.safetensors").string(), wrapped = (dir / "ddp.safetensors").string();

  gb::manual_seed(0);
  Net net;
  gb::save(net, plain);
  gb::save(Wrapped(net), wrapped);

  // 1. The changed model.
  NetV2 v2;
  std::string strict_error = error_of([&] { gb::load(v2, plain); });
  lesson.measured("strict load into the changed model raised", strict_error.empty() ? "(nothing)" : strict_error);
  gb::nn::IncompatibleKeys keys = gb::load(v2, plain, /*strict=*/false);
  lesson.measured("strict=false: missing keys", list(keys.missing_keys));
  lesson.measured("strict=false: unexpected keys", list(keys.unexpected_keys));
  bool encoder_loaded = gb::equal(v2->encoder->weight, net->encoder->weight);
  lesson.measured("strict=false: encoder.weight loaded", encoder_loaded ? "yes (equal to the saved one)" : "no");
  const std::vector<std::string> want_missing = {"norm.weight", "norm.bias", "classifier.weight", "classifier.bias"};
  const std::vector<std::string> want_unexpected = {"head.weight", "head.bias"};
  bool all_named = !strict_error.empty();
  for (const auto& k : want_missing) all_named = all_named && strict_error.find('"' + k + '"') != std::string::npos;
  for (const auto& k : want_unexpected) all_named = all_named && strict_error.find('"' + k + '"') != std::string::npos;
  auto same_set = [](std::vector<std::string> a, std::vector<std::string> b) {
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    return a == b;
  };
  bool lists_right = same_set(keys.missing_keys, want_missing) && same_set(keys.unexpected_keys, want_unexpected);

  // 2. The "module." prefix.
  gb::StateDict ddp = gb::load(wrapped);
  lesson.measured("keys of the DataParallel-style file", list(ddp.keys()));
  Net fresh;
  gb::NoGradGuard no_grad;
  gb::Tensor x = gb::randn({5, 4});
  double before_diff = (fresh(x) - net(x)).abs().max().item<double>();
  std::string prefixed_error = error_of([&] { fresh->load_state_dict(ddp); });
  lesson.measured("strict load of it into a bare Net raised", prefixed_error.empty() ? "(nothing)" : prefixed_error);
  std::string stripped_error = error_of([&] { fresh->load_state_dict(gb::strip_prefix(ddp)); });
  lesson.measured("strict load after strip_prefix(sd, \"module.\") raised",
                  stripped_error.empty() ? "(nothing)" : stripped_error);
  double out_diff = (fresh(x) - net(x)).abs().max().item<double>();
  lesson.measured("max |bare Net(x) - saved Net(x)| before loading", before_diff);
  lesson.measured("max |bare Net(x) - saved Net(x)| after loading the stripped dict", out_diff);
  fs::remove_all(dir);

  bool holds = all_named && lists_right && encoder_loaded && !prefixed_error.empty() && stripped_error.empty() &&
               before_diff > 0 && out_diff == 0;
  char evidence[300];
  std::snprintf(evidence, sizeof evidence,
                "the strict error %s the 4 missing and 2 unexpected keys, strict=false returned %s; the prefixed "
                "dict %s strictly and after strip_prefix gave the saved model's outputs (max |diff| %g)",
                all_named ? "named all of" : "did not name all of", lists_right ? "the same lists" : "other lists",
                prefixed_error.empty() ? "loaded" : "failed", out_diff);
  return lesson.verdict(holds, evidence);
}
