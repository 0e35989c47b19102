// engine/data/csv.cpp — the numeric CSV reader: one pass, strtod per cell, errors with file:line:column.
#include "glassbox/data/csv.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "glassbox/ops/factory.h"
#include "glassbox/ops/shape.h"

namespace gb::data {
namespace {

std::vector<std::string> split(const std::string& line, char delim) {
  std::vector<std::string> cells;
  size_t start = 0;
  for (;;) {
    size_t end = line.find(delim, start);
    std::string c = line.substr(start, end == std::string::npos ? std::string::npos : end - start);
    size_t a = c.find_first_not_of(" \t\r"), b = c.find_last_not_of(" \t\r");
    cells.push_back(a == std::string::npos ? "" : c.substr(a, b - a + 1));
    if (end == std::string::npos) return cells;
    start = end + 1;
  }
}

bool parse(const std::string& cell, double& out) {
  if (cell.empty()) return false;
  char* end = nullptr;
  errno = 0;
  out = std::strtod(cell.c_str(), &end);
  return end == cell.c_str() + cell.size() && errno != ERANGE;
}

}  // namespace

CsvTable read_csv(const std::string& path, const CsvOptions& o) {
  std::ifstream f(path);
  GB_CHECK(f, "read_csv: cannot open ", path, ": ", std::strerror(errno));
  CsvTable table;
  std::vector<double> values;
  size_t ncols = 0;
  int64_t rows = 0, line_no = 0, first_data_line = 0;
  std::string line;
  bool first = true;
  while (std::getline(f, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::vector<std::string> cells = split(line, o.delimiter());
    if (first) {
      first = false;
      ncols = cells.size();
      bool header = o.header().has_value() ? *o.header() : false;
      if (!o.header().has_value()) {
        double v;
        for (const std::string& c : cells)
          if (!parse(c, v)) header = true;
      }
      if (header) {
        table.columns = cells;
        continue;
      }
    }
    if (!first_data_line) first_data_line = line_no;
    GB_CHECK(cells.size() == ncols, "read_csv: ", path, " line ", line_no, ": ", cells.size(), " columns, but line ",
             table.columns.empty() ? first_data_line : 1, " has ", ncols, "; every row needs the same columns");
    for (size_t c = 0; c < cells.size(); ++c) {
      double v;
      GB_CHECK(parse(cells[c], v), "read_csv: ", path, " line ", line_no, ", column ", c + 1, ": '", cells[c],
               "' is not a number; this reader takes numeric columns only (encode categories as numbers)");
      values.push_back(v);
    }
    ++rows;
  }
  GB_CHECK(rows > 0, "read_csv: ", path, " has no data rows");
  table.values = gb::tensor(ArrayRef<double>(values), TensorOptions().dtype(kDouble)).view({rows, int64_t(ncols)});
  return table;
}

namespace datasets {

CsvDataset::CsvDataset(const std::string& path, const CsvOptions& o) {
  CsvTable t = read_csv(path, o);
  columns_ = t.columns;
  const int64_t n = t.values.size(0), d = t.values.size(1);
  if (!o.target_column()) {
    features_ = t.values.to(kFloat);
    targets_ = gb::arange(n);
    return;
  }
  int64_t tc = *o.target_column() < 0 ? d + *o.target_column() : *o.target_column();
  GB_CHECK_INDEX(tc >= 0 && tc < d, "CsvDataset: ", path, ": target_column ", *o.target_column(),
                 " is out of range for ", d, " columns");
  GB_CHECK(d >= 2, "CsvDataset: ", path, ": one column cannot be both features and target; set target_column(nullopt)");
  std::vector<Tensor> parts;
  if (tc > 0) parts.push_back(t.values.narrow(1, 0, tc));
  if (tc < d - 1) parts.push_back(t.values.narrow(1, tc + 1, d - tc - 1));
  features_ = gb::cat(parts, 1).to(kFloat).contiguous();
  targets_ = t.values.select(1, tc).to(o.target_is_class() ? kInt64 : kFloat).contiguous();
}

Example<> CsvDataset::get(int64_t index) {
  GB_CHECK_INDEX(index >= 0 && index < size(), "CsvDataset: index ", index, " is out of range for ", size(), " rows");
  return {features_[index], targets_[index]};
}

}  // namespace datasets
}  // namespace gb::data
