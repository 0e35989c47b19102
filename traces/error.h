// traces/error.h — the one error type of the trace library.
//
// Every failure to create, write, open or read a trace throws gb::trace::Error (a std::runtime_error, so
// `catch (const std::exception&)` works). Messages name the file, what went wrong, and what to do; SQLite failures
// also name the sqlite3 call and its call site. traces/ does not depend on the engine, hence its own type.
#pragma once

#include <stdexcept>

namespace gb::trace {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The trace's file system is full, or the file reached the process's file-size limit (or the Writer's reserve for
// its closing rows would not fit any more): Writer::close_full() can still finish the file.
class DiskFullError : public Error {
 public:
  using Error::Error;
};

}  // namespace gb::trace
