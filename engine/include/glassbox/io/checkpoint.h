// glassbox/io/checkpoint.h — training checkpoints: model, optimizer, scheduler and scaler state, step, epoch, the
// random generator's state and free-form strings, in one safetensors file (written atomically, see serialize.h).
//
//   gb::save_checkpoint("ckpt.safetensors", net, opt, &sched, step, epoch);   // also saves the default RNG
//   auto ck = gb::load_checkpoint("ckpt.safetensors", net, opt, &sched);     // restores all four; ck.step, ...
//   gb::save_checkpoint(path, net, opt, &sched, step, epoch, &scaler);       // mixed precision: the GradScaler too
//
// Layout: tensors under "model.", "optimizer.", "scheduler.", "scaler."; in "__metadata__": "format" =
// "glassbox.checkpoint/1", "step", "epoch", "rng_state" (Generator::get_state) and each extra entry as
// "extra.<key>". Loading a file without the format marker (a plain state dict) or of a newer format version is an
// error that says so; the file is fully read and checked before anything is restored.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "glassbox/amp/grad_scaler.h"
#include "glassbox/io/serialize.h"
#include "glassbox/optim/lr_scheduler.h"
#include "glassbox/optim/optimizer.h"

namespace gb {

struct TrainingCheckpoint {
  StateDict model, optimizer, scheduler, scaler;
  int64_t step = 0, epoch = 0;
  std::string rng_state;  // Generator::get_state(); empty: none saved
  std::map<std::string, std::string> extra;
};

// The "format" value this version writes and reads.
constexpr const char* kCheckpointFormat = "glassbox.checkpoint/1";

void save_checkpoint(const std::string& path, const TrainingCheckpoint& checkpoint);
TrainingCheckpoint load_checkpoint(const std::string& path, std::optional<Device> map_location = std::nullopt);

// Captures module->state_dict(), optimizer.state_dict(), scheduler->state_dict() and scaler->state_dict() (when
// given) and default_generator()'s state.
void save_checkpoint(const std::string& path, ModuleRef module, const optim::Optimizer& optimizer,
                     const optim::LRScheduler* scheduler = nullptr, int64_t step = 0, int64_t epoch = 0,
                     const amp::GradScaler* scaler = nullptr);
// Loads the file (onto the module's device), then restores the module (strict), the optimizer, the scheduler
// (when given; the file must hold one) and the default generator; returns the whole checkpoint (step, epoch, ...).
// An enabled scaler needs scaler state in the file (a disabled one saves and loads nothing).
TrainingCheckpoint load_checkpoint(const std::string& path, ModuleRef module, optim::Optimizer& optimizer,
                                   optim::LRScheduler* scheduler = nullptr, amp::GradScaler* scaler = nullptr);

}  // namespace gb
