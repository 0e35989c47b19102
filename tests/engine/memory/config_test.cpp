// tests/engine/memory/config_test.cpp — GLASSBOX_ALLOC_CONF parsing: the accepted forms, and errors that name the
// key, the value and what would have been accepted.
#include <doctest/doctest.h>

#include <cstdlib>

#include <glassbox/glassbox.h>

namespace mem = gb::memory;

TEST_CASE("key:value pairs in PyTorch's form, sizes in binary units") {
  auto c = mem::parse_alloc_conf("max_split_size_mb:128, capacity:80GiB,context: 512MiB");
  CHECK(c.max_split_size == (int64_t(128) << 20));
  CHECK(c.capacity == (int64_t(80) << 30));
  REQUIRE(c.context.has_value());
  CHECK(*c.context == (int64_t(512) << 20));
  auto d = mem::parse_alloc_conf("");
  CHECK(d.max_split_size == 0);
  CHECK(d.capacity == 0);
  CHECK_FALSE(d.context.has_value());
  CHECK(mem::parse_size("1048576", "capacity") == 1048576);
  CHECK(mem::parse_size("3 KiB", "capacity") == 3072);
  CHECK(mem::parse_size("2TiB", "capacity") == (int64_t(2) << 40));
}

TEST_CASE("unknown keys, PyTorch keys we lack, and bad values are errors that say what is accepted") {
  CHECK_THROWS_WITH_AS(mem::parse_alloc_conf("max_split_size:128"),
                       doctest::Contains("unknown key 'max_split_size' (value '128'). Accepted: max_split_size_mb:"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(mem::parse_alloc_conf("expandable_segments:True"),
                       doctest::Contains("PyTorch's key 'expandable_segments' (value 'True') is not supported"), gb::Error);
  CHECK_THROWS_WITH_AS(mem::parse_alloc_conf("max_split_size_mb:20"),
                       doctest::Contains("bad value '20' for max_split_size_mb: expected a whole number of MiB more than 20"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(mem::parse_alloc_conf("max_split_size_mb:abc"), doctest::Contains("bad value 'abc'"), gb::Error);
  CHECK_THROWS_WITH_AS(mem::parse_alloc_conf("capacity:80GB"),
                       doctest::Contains("bad value '80GB' for capacity: expected a byte count or a whole number with KiB"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(mem::parse_alloc_conf("capacity:-1"), doctest::Contains("bad value '-1' for capacity"), gb::Error);
  CHECK_THROWS_WITH_AS(mem::parse_alloc_conf("capacity"), doctest::Contains("'capacity' is not a key:value pair"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(mem::parse_alloc_conf("capacity:99999999999TiB"), doctest::Contains("bad value"), gb::Error);
}

TEST_CASE("the environment variable is read when an allocator is made") {
  ::setenv("GLASSBOX_ALLOC_CONF", "capacity:8GiB,context:300MiB", 1);
  auto c = mem::alloc_conf_from_env();
  CHECK(c.capacity == (int64_t(8) << 30));
  mem::CachingAllocator a(mem::make_meta_raw_allocator(), c);
  CHECK(a.capacity() == (int64_t(8) << 30));
  CHECK(a.context_bytes() == (int64_t(300) << 20));
  ::setenv("GLASSBOX_ALLOC_CONF", "capacity:lots", 1);
  CHECK_THROWS_WITH_AS(mem::alloc_conf_from_env(), doctest::Contains("GLASSBOX_ALLOC_CONF: bad value 'lots'"), gb::Error);
  ::unsetenv("GLASSBOX_ALLOC_CONF");
  CHECK(mem::alloc_conf_from_env().capacity == 0);
}
