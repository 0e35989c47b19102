// glassbox/data/csv.h — numeric CSV files: read_csv, and CsvDataset (features + a target column).
//
// Cells are numbers separated by `delimiter`; a first line with any non-numeric cell is a header (or say so with
// header(true/false)). Empty lines are skipped. A bad cell or a short/long row throws gb::Error naming the file,
// line and column.
//
//   gb::data::datasets::CsvDataset ds("iris.csv", gb::data::CsvOptions().target_column(-1));
//   ds.get(0).data   // (D) float32 features;  .target: () int64 class (the last column)
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "glassbox/data/dataset.h"
#include "glassbox/nn/options.h"

namespace gb::data {

struct CsvOptions {
  GB_ARG(char, delimiter) = ',';
  GB_ARG(std::optional<bool>, header);        // nullopt: a first line with a non-numeric cell is the header
  GB_ARG(std::optional<int64_t>, target_column) = -1;  // CsvDataset: this column (negative from the end) is the
                                                        // target; nullopt: no target (the target is the row index)
  GB_ARG(bool, target_is_class) = true;       // the target as int64 (else float32)
};

struct CsvTable {
  std::vector<std::string> columns;  // the header's names, or empty
  Tensor values;                     // (rows, columns) float64
};

CsvTable read_csv(const std::string& path, const CsvOptions& options = {});

namespace datasets {

class CsvDataset : public gb::data::Dataset<Example<>> {
 public:
  explicit CsvDataset(const std::string& path, const CsvOptions& options = {});
  Example<> get(int64_t index) override;
  int64_t size() const override { return features_.size(0); }
  const std::vector<std::string>& columns() const { return columns_; }

 private:
  Tensor features_, targets_;
  std::vector<std::string> columns_;
};

}  // namespace datasets
}  // namespace gb::data
