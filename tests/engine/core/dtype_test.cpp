// tests/engine/core/dtype_test.cpp — dtype names, sizes, categories, the promotion lattice and the default dtype.
#include <sstream>

#include "support/check.h"

TEST_CASE("names, sizes and categories") {
  CHECK(std::string(gb::to_string(gb::kFloat)) == "Float");
  CHECK(std::string(gb::python_name(gb::kBFloat16)) == "bfloat16");
  CHECK(std::string(gb::tensor_type_name(gb::kInt64)) == "LongTensor");
  CHECK(gb::element_size(gb::kHalf) == 2);
  CHECK(gb::element_size(gb::kDouble) == 8);
  CHECK(gb::element_size(gb::kBool) == 1);
  CHECK(gb::is_floating_point(gb::kBFloat16));
  CHECK_FALSE(gb::is_floating_point(gb::kInt32));
  CHECK(gb::is_integral(gb::kBool, /*include_bool=*/true));
  CHECK_FALSE(gb::is_integral(gb::kBool));
  CHECK(gb::kFloat32 == gb::kFloat);
  CHECK(gb::kLong == gb::kInt64);
  CHECK(gb::ScalarType::Long == gb::kInt64);  // c10's enumerator names
  CHECK(gb::ScalarType::Int == gb::kInt32);
  CHECK(std::string(gb::to_string(gb::ScalarType::Long)) == "Long");
  // the small integers, under c10's and the Python names
  CHECK(gb::kByte == gb::kUInt8);
  CHECK(gb::ScalarType::Char == gb::kInt8);
  CHECK(gb::ScalarType::Short == gb::kInt16);
  CHECK(std::string(gb::to_string(gb::kByte)) == "Byte");
  CHECK(std::string(gb::to_string(gb::kChar)) == "Char");
  CHECK(std::string(gb::python_name(gb::kInt16)) == "int16");
  CHECK(std::string(gb::tensor_type_name(gb::kUInt8)) == "ByteTensor");
  CHECK(gb::element_size(gb::kUInt8) == 1);
  CHECK(gb::element_size(gb::kInt16) == 2);
  CHECK(gb::is_integral(gb::kInt8));
  CHECK_FALSE(gb::is_floating_point(gb::kUInt8));
  // appended after float64: the trace stores these numbers (params.dtype)
  CHECK(static_cast<int>(gb::kUInt8) == 7);
  CHECK(static_cast<int>(gb::kInt16) == 9);
  CHECK(gb::kNumScalarTypes == 10);
  std::ostringstream os;  // libtorch's operator<<: the c10 name
  os << gb::kLong << " " << gb::kByte;
  CHECK(os.str() == "Long Byte");
}

TEST_CASE("the default dtype is used by float factories and can be changed to another float") {
  CHECK(gb::get_default_dtype() == gb::kFloat);
  gb::set_default_dtype(gb::kFloat64);
  CHECK(gb::ones({1}).scalar_type() == gb::kFloat64);
  CHECK(gb::tensor({1.5}).scalar_type() == gb::kFloat64);
  CHECK((gb::arange(3) / 2).scalar_type() == gb::kFloat64);
  gb::set_default_dtype(gb::kFloat);
  CHECK_THROWS_WITH_AS(gb::set_default_dtype(gb::kInt64), doctest::Contains("only floating-point types"), gb::TypeError);
}

TEST_CASE("promotion lattice") {
  CHECK(gb::promote_types(gb::kHalf, gb::kBFloat16) == gb::kFloat);
  CHECK(gb::promote_types(gb::kInt32, gb::kInt64) == gb::kInt64);
  CHECK(gb::promote_types(gb::kInt64, gb::kHalf) == gb::kHalf);
  CHECK(gb::promote_types(gb::kBool, gb::kInt32) == gb::kInt32);
  CHECK(gb::promote_types(gb::kFloat, gb::kDouble) == gb::kDouble);
  // PyTorch's: uint8 and int8 meet at int16; bool below both; every integer below the floats
  CHECK(gb::promote_types(gb::kUInt8, gb::kInt8) == gb::kInt16);
  CHECK(gb::promote_types(gb::kInt8, gb::kUInt8) == gb::kInt16);
  CHECK(gb::promote_types(gb::kUInt8, gb::kInt16) == gb::kInt16);
  CHECK(gb::promote_types(gb::kInt8, gb::kInt32) == gb::kInt32);
  CHECK(gb::promote_types(gb::kBool, gb::kUInt8) == gb::kUInt8);
  CHECK(gb::promote_types(gb::kInt16, gb::kInt64) == gb::kInt64);
  CHECK(gb::promote_types(gb::kUInt8, gb::kHalf) == gb::kHalf);
  CHECK(gb::promote_types(gb::kInt16, gb::kFloat) == gb::kFloat);
}
