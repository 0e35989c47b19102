// traces/query/format.h — how the glassbox command prints times, shares, bytes and plain text tables.
//
// Times follow PyTorch's profiler tables (torch.autograd.profiler_util._format_time): microseconds with three
// decimals below 1 ms ("56.000us"), then milliseconds ("1.234ms"), then seconds ("2.345s"). Shares are
// "12.34%" ("NaN" when the total is 0, as PyTorch prints). Bytes use binary units: "512 B", "1.50 KiB",
// "3.00 MiB", "1.25 GiB" (negative values keep their sign, for diffs).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gb::query {

std::string format_time(double ns);                   // "1.234ms"
std::string format_share(double part, double total);  // "12.34%"
std::string format_bytes(std::int64_t bytes);         // "1.50 MiB"
std::string format_signed_time(double ns);            // "+1.234ms", "-56.000us" (diffs)
std::string format_signed_bytes(std::int64_t bytes);  // "+1.50 MiB"
std::string format_fixed(double v, int decimals);     // printf("%.*f")
std::string format_number(double v);                  // printf("%.4g"): "12.5", "1.2e+04", "nan", "inf"

// A plain table: a header row, a dashed rule, the rows; columns two spaces apart, every line indented by `indent`
// spaces. align holds one letter per column, 'l' or 'r'; columns past its end are right-aligned, except the first,
// which is left-aligned ("" = first left, the rest right). Trailing spaces are trimmed.
std::string format_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                         int indent = 2, const std::string& align = "");

}  // namespace gb::query
