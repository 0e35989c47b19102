// glassbox/nn/enum.h — libtorch's enum tags (gb::kReLU, gb::kFanIn, gb::kZeros, ...) and EnumValue, the option
// type that takes either a tag or its Python spelling.
//
//   gb::nn::init::kaiming_normal_(w, 0, gb::kFanOut, gb::kReLU);       // as libtorch
//   gb::nn::init::kaiming_normal_(w, 0, "fan_out", "relu");           // as Python
//   gb::nn::TransformerEncoderLayerOptions(64, 4).activation(gb::kGELU);
//
// A value is its lower-case Python name ("leaky_relu", "fan_in", "zeros"); each user checks it is one it knows.
#pragma once

#include <ostream>
#include <string>

namespace gb {

namespace enumtype {
struct Tag {
  const char* name;
};
}  // namespace enumtype

inline constexpr enumtype::Tag kLinear{"linear"}, kConv1d{"conv1d"}, kConv2d{"conv2d"}, kConv3d{"conv3d"},
    kConvTranspose1d{"conv_transpose1d"}, kConvTranspose2d{"conv_transpose2d"}, kConvTranspose3d{"conv_transpose3d"},
    kSigmoid{"sigmoid"}, kTanh{"tanh"}, kReLU{"relu"}, kLeakyReLU{"leaky_relu"}, kSELU{"selu"}, kGELU{"gelu"},
    kFanIn{"fan_in"}, kFanOut{"fan_out"}, kZeros{"zeros"}, kConstant{"constant"}, kReflect{"reflect"},
    kReplicate{"replicate"}, kCircular{"circular"}, kNearest{"nearest"}, kBilinear{"bilinear"},
    kTrilinear{"trilinear"}, kBicubic{"bicubic"}, kArea{"area"}, kNearestExact{"nearest-exact"};

namespace nn {

class EnumValue {
 public:
  EnumValue(enumtype::Tag tag) : name_(tag.name) {}        // NOLINT
  EnumValue(const char* name) : name_(name) {}             // NOLINT
  EnumValue(std::string name) : name_(std::move(name)) {}  // NOLINT
  const std::string& name() const noexcept { return name_; }
  bool operator==(const EnumValue& o) const { return name_ == o.name_; }
  bool operator==(const char* o) const { return name_ == o; }

 private:
  std::string name_;
};

inline std::ostream& operator<<(std::ostream& os, const EnumValue& v) { return os << v.name(); }

}  // namespace nn
}  // namespace gb
