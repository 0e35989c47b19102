// tests/engine/memory/category_test.cpp — the thread's allocation context: category guards, op and module
// contexts, nesting, thread-locality, and the interned name table.
#include <doctest/doctest.h>

#include <thread>

#include <glassbox/glassbox.h>

namespace mem = gb::memory;

TEST_CASE("categories are spelled as their enum and guards nest") {
  CHECK(std::string(mem::to_string(mem::Category::optimizer_state)) == "optimizer_state");
  CHECK(std::string(mem::to_string(mem::Category::autograd_detail)) == "autograd_detail");
  CHECK(mem::current_category() == mem::Category::temporary);  // an op output's category unless told otherwise
  {
    mem::CategoryGuard a(mem::Category::parameter);
    CHECK(mem::current_category() == mem::Category::parameter);
    {
      mem::CategoryGuard b(mem::Category::gradient);
      CHECK(mem::current_category() == mem::Category::gradient);
      mem::Category other = mem::Category::parameter;
      std::thread([&] { other = mem::current_category(); }).join();
      CHECK(other == mem::Category::temporary);  // another thread has its own
    }
    CHECK(mem::current_category() == mem::Category::parameter);
  }
  CHECK(mem::current_category() == mem::Category::temporary);  // an op output's category unless told otherwise
}

TEST_CASE("allocation contexts set op and module; an empty part keeps the outer one") {
  CHECK(mem::current_op_id() == 0);
  {
    mem::AllocationContext module_scope("", "encoder.layers.0");
    CHECK(mem::name_of(mem::current_module_id()) == "encoder.layers.0");
    CHECK(mem::current_op_id() == 0);
    {
      mem::AllocationContext op_scope("aten::matmul");
      CHECK(mem::name_of(mem::current_op_id()) == "aten::matmul");
      CHECK(mem::name_of(mem::current_module_id()) == "encoder.layers.0");
    }
    CHECK(mem::current_op_id() == 0);
  }
  CHECK(mem::current_module_id() == 0);
}

TEST_CASE("names are interned once: the same string gets the same id, and id 0 is the empty name") {
  uint32_t a = mem::intern_name("aten::relu"), b = mem::intern_name("aten::relu"), c = mem::intern_name("aten::gelu");
  CHECK(a == b);
  CHECK(a != c);
  CHECK(a != 0);
  CHECK(mem::intern_name("") == 0);
  CHECK(mem::name_of(0).empty());
  CHECK(mem::name_of(c) == "aten::gelu");
  CHECK(mem::name_of(999999).empty());
}
