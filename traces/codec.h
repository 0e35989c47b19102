// traces/codec.h — internal: one generic bind/read that moves any record between C++ and SQLite, over the columns
// traces/tables.h declares (a column's position in the INSERT or SELECT is its position there).
#pragma once

#include <limits>
#include <string>
#include <tuple>
#include <type_traits>

#include "traces/records.h"
#include "traces/sqlite.h"
#include "traces/tables.h"

namespace gb::trace::detail {

// Threads are re-written when a thread is renamed; every other table only grows.
template <class R> constexpr const char* insert_verb = "INSERT INTO ";
template <> inline constexpr const char* insert_verb<ThreadRecord> = "INSERT OR REPLACE INTO ";

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

template <class T>
void bind_value(Stmt& s, int i, const T& v) {
  if constexpr (is_optional<T>::value) {
    if (v) bind_value(s, i, *v); else s.bind_null(i, __FILE__, __LINE__);
  } else if constexpr (std::is_same_v<T, std::string>) {
    s.bind(i, std::string_view(v), __FILE__, __LINE__);
  } else if constexpr (std::is_floating_point_v<T>) {
    s.bind(i, static_cast<double>(v), __FILE__, __LINE__);
  } else {  // integers, bool, enums
    s.bind(i, static_cast<std::int64_t>(v), __FILE__, __LINE__);
  }
}

template <class T>
void read_value(sqlite3_stmt* s, int col, T& out) {
  if constexpr (is_optional<T>::value) {
    if (sqlite3_column_type(s, col) == SQLITE_NULL) { out.reset(); return; }
    typename T::value_type v{};
    read_value(s, col, v);
    out = v;
  } else if constexpr (std::is_same_v<T, std::string>) {
    const unsigned char* t = sqlite3_column_text(s, col);
    out.assign(t ? reinterpret_cast<const char*>(t) : "", static_cast<std::size_t>(sqlite3_column_bytes(s, col)));
  } else if constexpr (std::is_floating_point_v<T>) {
    // SQLite stores a NaN as NULL: a NULL in a plain (non-optional) REAL column reads back as NaN.
    out = sqlite3_column_type(s, col) == SQLITE_NULL ? std::numeric_limits<T>::quiet_NaN()
                                                     : static_cast<T>(sqlite3_column_double(s, col));
  } else {
    out = static_cast<T>(sqlite3_column_int64(s, col));
  }
}

// Calls f(column) for each column of Table that Row writes (when Row is the table's stored row) or reads.
template <class T, class Row, bool Write, class F>
void each_bound(F&& f) {
  std::apply(
      [&](const auto&... c) {
        auto one = [&](const auto& column) {
          using C = std::decay_t<decltype(column)>;
          if constexpr (std::is_same_v<std::conditional_t<Write, typename C::write_row, typename C::read_row>, Row>)
            f(column);
        };
        (one(c), ...);
      },
      T::columns);
}

// The number of columns an INSERT of Row (a table's stored row) binds.
template <class Row>
constexpr int written_columns() {
  int n = 0;
  std::apply(
      [&](const auto&... c) { ((n += std::is_same_v<typename std::decay_t<decltype(c)>::write_row, Row>), ...); },
      Table<Row>::columns);
  return n;
}

// "a, b, c": the columns an INSERT of Row writes (Write) or a SELECT of record R reads.
template <class R, bool Write>
std::string column_list() {
  using T = std::conditional_t<Write, Table<R>, typename ReadTable<R>::type>;
  std::string cols;
  each_bound<T, R, Write>([&](const auto& c) { (cols += (cols.empty() ? "" : ", ")) += c.name; });
  return cols;
}

// INSERT of `rows` rows of Row (a table's stored row) in one statement: one sqlite3_step for many rows.
template <class R>
std::string insert_rows_sql(int rows) {
  std::string one = "(";
  for (int i = 0; i < written_columns<R>(); ++i) one += i ? ", ?" : "?";
  one += ")";
  std::string q = std::string(insert_verb<R>) + std::string(Table<R>::name) + " (" + column_list<R, true>() +
                  ") VALUES ";
  for (int i = 0; i < rows; ++i) q += (i ? ", " : "") + one;
  return q;
}

template <class R>
std::string insert_sql() {
  return insert_rows_sql<R>(1);
}

template <class R>
std::string select_sql() {
  return "SELECT " + column_list<R, false>() + " FROM " + std::string(ReadTable<R>::type::name);
}

// Binds r's columns to parameters first, first + 1, ... (first > 1 for the later rows of a multi-row INSERT).
template <class R>
void bind_row(Stmt& s, const R& r, int first = 1) {
  int i = first;
  each_bound<Table<R>, R, true>([&](const auto& c) { bind_value(s, i++, r.*(c.write)); });
}

template <class R>
R read_row(sqlite3_stmt* s) {
  R r{};
  int col = 0;
  each_bound<typename ReadTable<R>::type, R, false>([&](const auto& c) { read_value(s, col++, r.*(c.read)); });
  return r;
}

}  // namespace gb::trace::detail
