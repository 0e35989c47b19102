// engine/io/checkpoint.cpp — TrainingCheckpoint <-> one safetensors file with prefixed keys and metadata.
#include "glassbox/io/checkpoint.h"

#include <charconv>

#include "glassbox/core/generator.h"
#include "glassbox/ops/factory.h"
#include "io/safetensors.h"

namespace gb {
namespace {

constexpr const char* kParts[] = {"model.", "optimizer.", "scheduler.", "scaler."};

template <typename C>  // TrainingCheckpoint or const TrainingCheckpoint
auto* part(C& c, int i) {
  decltype(&c.model) parts[] = {&c.model, &c.optimizer, &c.scheduler, &c.scaler};
  return parts[i];
}

int64_t parse_int(const std::string& path, const Metadata& md, const char* key) {
  auto it = md.find(key);
  GB_CHECK(it != md.end(), "gb::load_checkpoint: '", path, "' has no \"", key, "\" in its metadata; the checkpoint is "
           "damaged, save it again");
  int64_t v = 0;
  const char* end = it->second.data() + it->second.size();
  auto [p, ec] = std::from_chars(it->second.data(), end, v);
  GB_CHECK(ec == std::errc() && p == end && !it->second.empty(), "gb::load_checkpoint: '", path, "': \"", key,
           "\" is '", it->second, "', not an integer; the checkpoint is damaged, save it again");
  return v;
}

}  // namespace

void save_checkpoint(const std::string& path, const TrainingCheckpoint& checkpoint) {
  StateDict all;
  for (int i = 0; i < 4; ++i)
    for (const auto& item : *part(checkpoint, i)) all.insert(kParts[i] + item.key(), item.value());
  Metadata md;
  md["format"] = kCheckpointFormat;
  md["step"] = std::to_string(checkpoint.step);
  md["epoch"] = std::to_string(checkpoint.epoch);
  md["rng_state"] = checkpoint.rng_state;
  for (const auto& [k, v] : checkpoint.extra) md["extra." + k] = v;
  detail::save_safetensors(all, path, md);
}

TrainingCheckpoint load_checkpoint(const std::string& path, std::optional<Device> map_location) {
  Metadata md;
  StateDict all = detail::load_safetensors(path, map_location, &md);
  auto fmt = md.find("format");
  GB_CHECK(fmt != md.end(), "gb::load_checkpoint: '", path, "' is not a glassbox training checkpoint (its metadata "
           "has no \"format\": \"", kCheckpointFormat, "\"); it looks like a plain state dict: read it with gb::load, "
           "or write checkpoints with gb::save_checkpoint");
  GB_CHECK(fmt->second == kCheckpointFormat, "gb::load_checkpoint: '", path, "' has format '", fmt->second,
           "', and this glassbox reads '", kCheckpointFormat, "'",
           fmt->second.rfind("glassbox.checkpoint/", 0) == 0 ? "; it was written by a newer glassbox: update glassbox"
                                                               : "; it is not a glassbox training checkpoint");
  TrainingCheckpoint c;
  c.step = parse_int(path, md, "step");
  c.epoch = parse_int(path, md, "epoch");
  if (auto it = md.find("rng_state"); it != md.end()) c.rng_state = it->second;
  for (const auto& [k, v] : md)
    if (k.rfind("extra.", 0) == 0) c.extra[k.substr(6)] = v;
  for (const auto& item : all) {
    bool placed = false;
    for (int i = 0; i < 4 && !placed; ++i) {
      std::string p = kParts[i];
      if (item.key().compare(0, p.size(), p) == 0) {
        part(c, i)->insert(item.key().substr(p.size()), item.value());
        placed = true;
      }
    }
    GB_CHECK(placed, "gb::load_checkpoint: '", path, "' holds the tensor '", item.key(), "', outside model., "
             "optimizer., scheduler. and scaler.; the checkpoint is damaged or was not written by save_checkpoint");
  }
  return c;
}

void save_checkpoint(const std::string& path, ModuleRef module, const optim::Optimizer& optimizer,
                     const optim::LRScheduler* scheduler, int64_t step, int64_t epoch,
                     const amp::GradScaler* scaler) {
  TrainingCheckpoint c;
  c.model = module->state_dict();
  c.optimizer = optimizer.state_dict();
  if (scheduler != nullptr) c.scheduler = scheduler->state_dict();
  if (scaler != nullptr) c.scaler = scaler->state_dict();
  c.step = step;
  c.epoch = epoch;
  c.rng_state = default_generator().get_state();
  save_checkpoint(path, c);
}

TrainingCheckpoint load_checkpoint(const std::string& path, ModuleRef module, optim::Optimizer& optimizer,
                                   optim::LRScheduler* scheduler, amp::GradScaler* scaler) {
  std::optional<Device> device;
  auto params = module->parameters();
  if (!params.empty()) device = params.front().device();
  TrainingCheckpoint c = load_checkpoint(path, device);
  GB_CHECK(scheduler == nullptr || !c.scheduler.empty(), "gb::load_checkpoint: '", path, "' has no scheduler state "
           "but a scheduler was passed; pass nullptr, or save the checkpoint with the scheduler");
  GB_CHECK(scaler == nullptr || !scaler->is_enabled() || !c.scaler.empty(), "gb::load_checkpoint: '", path,
           "' has no GradScaler state but an enabled scaler was passed; pass nullptr (the scaler then starts from its "
           "initial scale), or save the checkpoint with the scaler");
  // Checks before changes: the model (strict, all-or-nothing), then the optimizer (also all-or-nothing).
  module->load_state_dict(c.model, /*strict=*/true);
  optimizer.load_state_dict(c.optimizer);
  if (scheduler != nullptr) scheduler->load_state_dict(c.scheduler);
  if (scaler != nullptr && scaler->is_enabled()) scaler->load_state_dict(c.scaler);
  if (!c.rng_state.empty()) default_generator().set_state(c.rng_state);
  return c;
}

}  // namespace gb
