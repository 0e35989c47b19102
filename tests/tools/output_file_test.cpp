// tests/tools/output_file_test.cpp — tools/output_file.cpp: whole files or nothing, plain and gzip.
#include "tools/output_file.h"

#include <doctest/doctest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "traces/error.h"
#include "traces/temp_dir.h"
#include "tools_test_util.h"

using namespace gb::tools;
using toolstest::slurp;
using toolstest::gunzip;
namespace fs = std::filesystem;

namespace {
std::size_t entries(const fs::path& dir) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}
}  // namespace

TEST_CASE("the file appears only at commit, complete; before that only a temporary file exists") {
  TempDir tmp;
  std::string path = tmp.file("out.json");
  std::string big(3 << 20, 'x');  // past the 1 MiB buffer, so data reaches the disk before commit
  {
    OutputFile f(path, false);
    f.write("[");
    f.write(big);
    CHECK_FALSE(fs::exists(path));
    CHECK(fs::exists(f.temp_path()));
    CHECK(fs::path(f.temp_path()).parent_path() == fs::path(path).parent_path());
    f.write("]");
    f.commit();
    CHECK(f.bytes_in() == big.size() + 2);
  }
  CHECK(slurp(path) == "[" + big + "]");
  CHECK(entries(tmp.dir) == 1);
}

TEST_CASE("an OutputFile dropped without commit (an exception) leaves nothing, and an old file untouched") {
  TempDir tmp;
  std::string path = tmp.file("out.json");
  std::ofstream(path) << "old";
  try {
    OutputFile f(path, false);
    f.write(std::string(2 << 20, 'y'));
    throw std::runtime_error("export failed half way");
  } catch (const std::runtime_error&) {
  }
  CHECK(slurp(path) == "old");
  CHECK(entries(tmp.dir) == 1);
}

TEST_CASE("gzip: the file decompresses to exactly what was written") {
  TempDir tmp;
  std::string path = tmp.file("out.json.gz");
  std::string text;
  for (int i = 0; i < 100000; ++i) text += "{\"ph\":\"X\",\"ts\":" + std::to_string(i) + "},\n";
  {
    OutputFile f(path, ends_with_gz(path));
    f.write(text);
    f.commit();
  }
  CHECK(fs::file_size(path) < text.size() / 5);
  CHECK(gunzip(path) == text);
  CHECK(ends_with_gz("a.json.gz"));
  CHECK_FALSE(ends_with_gz("a.json"));
  CHECK_FALSE(ends_with_gz(".gz"));
}

TEST_CASE("a folder that does not exist: one error naming the file and what to check") {
  TempDir tmp;
  std::string path = tmp.file("no/such/folder/out.json");
  CHECK_THROWS_WITH_AS(OutputFile(path, false), doctest::Contains("check that the folder exists and is writable"),
                       gb::trace::Error);
}
