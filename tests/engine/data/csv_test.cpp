// tests/engine/data/csv_test.cpp — engine/data/csv.cpp: headers, targets, and errors with line and column.
#include <doctest/doctest.h>

#include <fstream>

#include "data_test_util.h"
#include "traces/temp_dir.h"

using gb::data::CsvOptions;

TEST_CASE("a header is detected; the last column is the class target") {
  TempDir tmp;
  std::string p = tmp.file("iris.csv");
  std::ofstream(p) << "a, b ,label\n1.5,2,0\n\n-3,4e1,2\n";
  auto t = gb::data::read_csv(p);
  CHECK(t.columns == std::vector<std::string>{"a", "b", "label"});
  CHECK(t.values.sizes() == gb::IntArrayRef({2, 3}));
  gb::data::datasets::CsvDataset ds(p);
  CHECK(ds.size() == 2);
  auto e = ds.get(1);
  CHECK(e.data.sizes() == gb::IntArrayRef({2}));
  CHECK(e.data[1].item<float>() == 40.0f);
  CHECK(e.target.item<int64_t>() == 2);
  CHECK(e.target.scalar_type() == gb::kInt64);
  gb::data::datasets::CsvDataset first(p, CsvOptions().target_column(0).target_is_class(false));
  CHECK(first.get(0).target.item<float>() == 1.5f);
  CHECK(first.get(0).data[0].item<float>() == 2.0f);

  std::string q = tmp.file("plain.csv");
  std::ofstream(q) << "1;2\n3;4\n";
  auto plain = gb::data::read_csv(q, CsvOptions().delimiter(';'));
  CHECK(plain.columns.empty());
  CHECK(plain.values.size(0) == 2);
  CHECK(gb::data::read_csv(q, CsvOptions().delimiter(';').header(true)).values.size(0) == 1);
}

TEST_CASE("a bad cell names file, line and column; a ragged row names both lines") {
  TempDir tmp;
  std::string p = tmp.file("bad.csv");
  std::ofstream(p) << "x,y\n1,2\n3,oops\n";
  CHECK_THROWS_WITH(gb::data::read_csv(p), gbtest::contains(p + " line 3, column 2: 'oops' is not a number"));
  std::ofstream(p) << "x,y\n1,2\n3\n";
  CHECK_THROWS_WITH(gb::data::read_csv(p), gbtest::contains(p + " line 3: 1 columns, but line 1 has 2"));
  std::ofstream(p) << "x,y\n";
  CHECK_THROWS_WITH(gb::data::read_csv(p), gbtest::contains("has no data rows"));
}
