// engine/utils/checkpoint.cpp — non-reentrant activation checkpointing over saved-tensor hooks (checkpoint.h).
//
// One Frame per checkpoint call: the forward's pack hook hands out a Holder per saved tensor (its position) and
// records the tensor's metadata; the unpack hook recomputes fn when the position it needs is missing, with a pack
// hook that stores each recomputed tensor by position (for holders still alive) and checks it against the
// forward's metadata.
#include "glassbox/utils/checkpoint.h"

#include <any>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "glassbox/amp/autocast.h"
#include "glassbox/autograd/grad_mode.h"
#include "glassbox/autograd/saved_tensor_hooks.h"
#include "glassbox/core/error.h"
#include "glassbox/core/generator.h"
#include "glassbox/ops/factory.h"

namespace gb::utils {
namespace {

struct Holder {
  size_t index;
};

struct Metadata {
  std::vector<int64_t> sizes;
  ScalarType dtype;
  Device device;
  bool operator==(const Metadata& o) const { return sizes == o.sizes && dtype == o.dtype && device == o.device; }
  std::string str() const {
    std::ostringstream os;
    os << "{'shape': torch.Size(" << IntArrayRef(sizes) << "), 'dtype': " << to_string(dtype)
       << ", 'device': " << device << "}";
    return os.str();
  }
};

Metadata metadata_of(const Tensor& t) { return Metadata{t.sizes().vec(), t.scalar_type(), t.device()}; }

struct AutocastSetting {
  bool enabled;
  ScalarType dtype;
};

struct Frame {
  std::function<variable_list(const variable_list&)> fn;
  variable_list inputs;
  bool preserve_rng_state;
  std::string rng_state;
  AutocastSetting autocast[2];
  bool cache_enabled;
  std::vector<std::weak_ptr<Holder>> holders;  // one per tensor saved during the forward
  std::vector<Metadata> metadata;
  std::vector<Tensor> recomputed;  // by position; emptied as backward uses them
  bool recomputing = false;

  void recompute();
};

// Puts the default generator back to its state at construction.
class RngRestore {
 public:
  RngRestore() : state_(default_generator().get_state()) {}
  ~RngRestore() { default_generator().set_state(state_); }

 private:
  std::string state_;
};

void Frame::recompute() {
  GB_CHECK(!recomputing,
           "torch.utils.checkpoint: recomputation needed a saved tensor of the checkpoint being "
           "recomputed; the checkpointed function must not run backward through its own results");
  recomputing = true;
  struct Done {
    bool& flag;
    ~Done() { flag = false; }
  } done{recomputing};
  recomputed.assign(holders.size(), Tensor());
  size_t counter = 0;
  std::vector<std::string> mismatches;
  {
    std::optional<RngRestore> restore;
    if (preserve_rng_state) {
      restore.emplace();
      default_generator().set_state(rng_state);
    }
    const DeviceType kinds[2] = {kCPU, kCUDA};
    std::optional<gb::autocast> ac[2];
    for (int k = 0; k < 2; ++k) ac[k].emplace(kinds[k], autocast[k].dtype, autocast[k].enabled, cache_enabled);
    EnableGradGuard grad;
    autograd::SavedTensorHooks hooks(
        [this, &counter, &mismatches](const Tensor& t) -> std::any {
          size_t i = counter++;
          GB_CHECK(i < holders.size(),
                   "torch.utils.checkpoint: trying to save more tensors during recomputation "
                   "than during the original forward pass. The checkpointed function must do the same work each "
                   "time it runs: make any data-dependent branch depend only on its inputs.");
          Metadata m = metadata_of(t);
          if (!(m == metadata[i]))
            mismatches.push_back("tensor at position " + std::to_string(i) + ":\nsaved metadata: " + metadata[i].str() +
                                 "\nrecomputed metadata: " + m.str() + "\n");
          else if (!holders[i].expired())
            recomputed[i] = t.detach();
          return std::any();
        },
        [](const std::any&) -> Tensor {
          throw Error(
              "torch.utils.checkpoint: Unpack is being triggered for a tensor that was already unpacked "
              "once. If you are calling ctx.saved_tensors in backward, make sure to do so only once.");
        });
    fn(inputs);
  }
  if (!mismatches.empty()) {
    std::string msg =
        "torch.utils.checkpoint: Recomputed values for the following tensors have different metadata "
        "than during the forward pass.\n";
    for (const auto& s : mismatches) msg += s;
    throw Error(msg + "The checkpointed function must compute the same shapes and dtypes each time it runs.");
  }
  GB_CHECK(counter == holders.size(),
           "torch.utils.checkpoint: A different number of tensors was saved during the "
           "original forward and recomputation.\nNumber of tensors saved during forward: ",
           holders.size(), "\nNumber of tensors saved during recomputation: ", counter,
           "\nThe checkpointed function must do the same work each time it runs (same branches, same ops).");
}

}  // namespace

variable_list checkpoint(std::function<variable_list(const variable_list&)> fn, const variable_list& inputs,
                         bool preserve_rng_state) {
  GB_CHECK(fn != nullptr, "checkpoint: fn is empty; pass the function to run");
  if (!GradMode::is_enabled()) return fn(inputs);  // nothing is saved without grad mode: nothing to recompute
  auto frame = std::make_shared<Frame>();
  frame->fn = std::move(fn);
  frame->inputs = inputs;
  frame->preserve_rng_state = preserve_rng_state;
  if (preserve_rng_state) frame->rng_state = default_generator().get_state();
  const DeviceType kinds[2] = {kCPU, kCUDA};
  for (int k = 0; k < 2; ++k)
    frame->autocast[k] = {amp::is_autocast_enabled(kinds[k]), amp::get_autocast_dtype(kinds[k])};
  frame->cache_enabled = amp::is_autocast_cache_enabled();

  // Every SavedVariable keeps a copy of the hook pair, so the unpack hook keeps the frame (fn, inputs) alive until
  // the graph is freed; pack only runs during this call.
  Frame* f = frame.get();
  autograd::SavedTensorHooks hooks(
      [f](const Tensor& t) -> std::any {
        auto h = std::make_shared<Holder>(Holder{f->holders.size()});
        f->holders.push_back(h);
        f->metadata.push_back(metadata_of(t));
        return h;
      },
      [frame](const std::any& packed) -> Tensor {
        const auto& h = std::any_cast<const std::shared_ptr<Holder>&>(packed);
        if (frame->recomputed.size() != frame->holders.size() || !frame->recomputed[h->index].defined())
          frame->recompute();
        Tensor t = std::move(frame->recomputed[h->index]);  // used once: free it as backward moves on
        frame->recomputed[h->index] = Tensor();
        return t;
      });
  return frame->fn(frame->inputs);
}

Tensor checkpoint(std::function<Tensor(const Tensor&)> fn, const Tensor& input, bool preserve_rng_state) {
  GB_CHECK(fn != nullptr, "checkpoint: fn is empty; pass the function to run");
  auto out = checkpoint([fn = std::move(fn)](const variable_list& in) { return variable_list{fn(in[0])}; },
                        variable_list{input}, preserve_rng_state);
  return out[0];
}

Tensor checkpoint_sequential(const nn::Sequential& sequential, int64_t segments, const Tensor& input,
                             bool preserve_rng_state) {
  int64_t n = int64_t(sequential->size());
  GB_CHECK(segments >= 1 && segments <= n,
           "checkpoint_sequential: segments must be between 1 and the number of "
           "modules (",
           n, "), but got ", segments);
  auto run = [&sequential](int64_t start, int64_t end) {
    // the holder (a shared_ptr) is copied: backward may recompute after the caller's Sequential is gone
    return [seq = sequential, start, end](const Tensor& x) {
      Tensor y = x;
      for (int64_t j = start; j <= end; ++j) y = seq->module_at(size_t(j)).forward(y);
      return y;
    };
  };
  int64_t size = n / segments;
  int64_t end = -1;
  Tensor x = input;
  for (int64_t start = 0; start < size * (segments - 1); start += size) {
    end = start + size - 1;
    x = checkpoint(run(start, end), x, preserve_rng_state);
  }
  return run(end + 1, n - 1)(x);  // the last segment is not checkpointed
}

}  // namespace gb::utils
