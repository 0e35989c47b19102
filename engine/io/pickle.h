// engine/io/pickle.h — Unpickler: a small pickle VM for the opcodes torch.save and libtorch emit (protocol 2, plus FRAME,
// MEMOIZE and STACK_GLOBAL of later protocols). It builds plain values (None, bool, int, float, str, tuple, list,
// dict) and leaves every class to the caller's hooks: find_class must return a value for an allowed global or
// throw, so no global outside the caller's allow-list is ever reached, and nothing is executed.
//
// Anything else — another opcode, a malformed operand, a stack underflow, nesting deeper than 100 — is a
// gb::Error prefixed with `context` (the file and entry), naming the opcode and its byte offset.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "glassbox/core/tensor.h"

namespace gb::detail {

struct PyObject;
using PyRef = std::shared_ptr<PyObject>;

struct PyObject {
  enum class Kind { none, boolean, integer, floating, string, tuple, list, dict, global, object };
  Kind kind = Kind::none;
  bool boolean = false;
  int64_t integer = 0;
  double floating = 0;
  std::string str;                            // string; global: "module.name"; object: its type (hooks' choice)
  std::vector<PyRef> items;                   // tuple, list
  std::vector<std::pair<PyRef, PyRef>> pairs; // dict, in insertion order
  Tensor tensor;                              // object: what the hooks made
  std::string note;                           // object: anything else the hooks keep (e.g. why it is unusable)
  int depth = 0;                              // nesting, capped to keep destruction shallow

  static PyRef make(Kind k) {
    auto p = std::make_shared<PyObject>();
    p->kind = k;
    return p;
  }
  const char* kind_name() const;
};

class Unpickler {
 public:
  struct Hooks {
    std::function<PyRef(const std::string& module, const std::string& name)> find_class;
    std::function<PyRef(const PyRef& pid)> persistent_load;
    std::function<PyRef(const PyRef& callable, const PyRef& args)> reduce;
    std::function<void(const PyRef& object, const PyRef& state)> build;
  };
  Unpickler(std::string context, Hooks hooks) : context_(std::move(context)), hooks_(std::move(hooks)) {}
  PyRef load(std::string_view data);

 private:
  [[noreturn]] void bad(const std::string& problem) const;
  std::string context_;
  Hooks hooks_;
  size_t op_at_ = 0;
  int op_ = 0;
};

}  // namespace gb::detail
