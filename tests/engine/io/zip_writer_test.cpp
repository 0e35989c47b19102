// tests/engine/io/zip_writer_test.cpp — ZipWriter: what it writes reads back through ZipReader and Python's zipfile
// (an independent reader) byte for byte, every entry's data starts at a multiple of 64, and the CRCs are the
// textbook ones.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>

#include "engine/io/io_test_util.h"
#include "io/zip_reader.h"
#include "io/zip_writer.h"

using iotest::TempDir;

TEST_CASE("entries round-trip through ZipReader, 64-byte aligned, with the right CRCs") {
  TempDir tmp;
  std::vector<std::pair<std::string, std::string>> items = {
      {"a/data/0", std::string(100, '\x07')}, {"a/data.pkl", "\x80\x02N."}, {"a/empty", ""},
      {"a/code/__torch__.py", "class Module(Module):\n  pass\n"}};
  std::string bytes;
  gb::detail::ZipWriter zip([&](const void* d, size_t n) { bytes.append(static_cast<const char*>(d), n); });
  for (const auto& [name, data] : items) zip.add(name, data);
  zip.finish();
  CHECK_THROWS_AS(zip.add("late", ""), gb::Error);
  const std::string path = tmp / "out.zip";
  iotest::write_bytes(path, bytes);

  gb::detail::ZipReader reader(path);
  REQUIRE(reader.entries().size() == items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    const auto& e = reader.entries()[i];
    CAPTURE(e.name);
    CHECK(e.name == items[i].first);
    CHECK(e.offset % 64 == 0);
    CHECK(e.crc32 == iotest::crc32(items[i].second));
    CHECK(reader.read(e) == items[i].second);  // read() checks the CRC too
  }
  CHECK(gb::detail::crc32(reinterpret_cast<const unsigned char*>("123456789"), 9) == 0xcbf43926u);  // the check value
}

TEST_CASE("Python's zipfile reads the archive and finds no damage") {
  TempDir tmp;
  std::string bytes;
  gb::detail::ZipWriter zip([&](const void* d, size_t n) { bytes.append(static_cast<const char*>(d), n); });
  zip.add("x/one", std::string("hello"));
  zip.add("x/two", std::string(4096, 'z'));
  zip.finish();
  const std::string path = tmp / "py.zip";
  iotest::write_bytes(path, bytes);
  const std::string cmd = "python3 -c \"import zipfile,sys; z=zipfile.ZipFile(sys.argv[1]); assert z.testzip() is "
                          "None; assert z.read('x/one')==b'hello'; assert len(z.read('x/two'))==4096\" " + path;
  CHECK(std::system(cmd.c_str()) == 0);
}
