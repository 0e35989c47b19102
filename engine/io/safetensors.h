// engine/io/safetensors.h — the safetensors reader and writer behind gb::save / gb::load (glassbox/io/serialize.h
// has the format and the guarantees); checkpoints use them with their own metadata.
#pragma once

#include <optional>
#include <string>

#include "glassbox/io/serialize.h"

namespace gb::detail {

void save_safetensors(const StateDict& state_dict, const std::string& path, const Metadata& metadata);
// Validates the whole header first; `metadata` (when given) receives "__metadata__".
StateDict load_safetensors(const std::string& path, std::optional<Device> map_location, Metadata* metadata);
Metadata load_safetensors_metadata(const std::string& path);

}  // namespace gb::detail
