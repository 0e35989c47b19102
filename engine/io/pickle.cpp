// engine/io/pickle.cpp — the pickle VM: a value stack, a mark stack and a memo; classes go through the hooks.
#include "io/pickle.h"

#include <bit>
#include <cstring>
#include <unordered_map>

#include "glassbox/core/error.h"

namespace gb::detail {
namespace {

using Kind = PyObject::Kind;
constexpr int kMaxDepth = 100;

const char* opcode_name(int op) {
  switch (op) {
    case 0x80: return "PROTO";
    case 0x95: return "FRAME";
    case 'c': return "GLOBAL";
    case 0x93: return "STACK_GLOBAL";
    case 'Q': return "BINPERSID";
    case 'R': return "REDUCE";
    case 'b': return "BUILD";
    case '(': return "MARK";
    case 't': return "TUPLE";
    case 0x85: return "TUPLE1";
    case 0x86: return "TUPLE2";
    case 0x87: return "TUPLE3";
    case ')': return "EMPTY_TUPLE";
    case ']': return "EMPTY_LIST";
    case '}': return "EMPTY_DICT";
    case 'a': return "APPEND";
    case 'e': return "APPENDS";
    case 's': return "SETITEM";
    case 'u': return "SETITEMS";
    case 'X': return "BINUNICODE";
    case 0x8c: return "SHORT_BINUNICODE";
    case 'J': return "BININT";
    case 'K': return "BININT1";
    case 'M': return "BININT2";
    case 0x8a: return "LONG1";
    case 'G': return "BINFLOAT";
    case 0x88: return "NEWTRUE";
    case 0x89: return "NEWFALSE";
    case 'N': return "NONE";
    case 'q': return "BINPUT";
    case 'r': return "LONG_BINPUT";
    case 'h': return "BINGET";
    case 'j': return "LONG_BINGET";
    case 0x94: return "MEMOIZE";
    case '.': return "STOP";
    // Known but not accepted: named so the message says what the file holds.
    case 0x8f: return "EMPTY_SET";
    case 0x90: return "ADDITEMS";
    case 0x91: return "FROZENSET";
    case 0x81: return "NEWOBJ";
    case 0x92: return "NEWOBJ_EX";
    case 'i': return "INST";
    case 'o': return "OBJ";
    case 'P': return "PERSID";
    case 'U': return "SHORT_BINSTRING";
    case 'T': return "BINSTRING";
    case 'C': return "SHORT_BINBYTES";
    case 'B': return "BINBYTES";
    case 0x8e: return "BINBYTES8";
    case 0x8d: return "BINUNICODE8";
    case 0x96: return "BYTEARRAY8";
    case 'I': return "INT";
    case 'L': return "LONG";
    case 'F': return "FLOAT";
    case 'V': return "UNICODE";
    case 'S': return "STRING";
    default: return "an unknown opcode";
  }
}

void nest(PyObject& container, const PyRef& child, const std::function<void(const std::string&)>& bad) {
  if (child->depth + 1 > container.depth) container.depth = child->depth + 1;
  if (container.depth > kMaxDepth) bad("values nest deeper than " + std::to_string(kMaxDepth) + " levels");
}

}  // namespace

const char* PyObject::kind_name() const {
  switch (kind) {
    case Kind::none: return "None";
    case Kind::boolean: return "bool";
    case Kind::integer: return "int";
    case Kind::floating: return "float";
    case Kind::string: return "str";
    case Kind::tuple: return "tuple";
    case Kind::list: return "list";
    case Kind::dict: return "dict";
    case Kind::global: return "global";
    case Kind::object: return "object";
  }
  return "?";
}

void Unpickler::bad(const std::string& problem) const {
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02x", op_);
  throw Error(str_cat(context_, ": ", problem, " (at byte ", op_at_, ", opcode ", opcode_name(op_), " ", hex,
                      "). The pickle is damaged or holds more than tensors; save only a state dict of tensors "
                      "(torch.save(model.state_dict(), path))"));
}

PyRef Unpickler::load(std::string_view data) {
  std::vector<PyRef> stack;
  std::vector<size_t> marks;
  std::unordered_map<uint64_t, PyRef> memo;
  size_t pos = 0;
  auto fail = [this](const std::string& p) { bad(p); };

  auto need = [&](size_t n) {
    if (data.size() - pos < n) bad(str_cat("the operand needs ", n, " bytes but the pickle ends"));
  };
  auto read_u = [&](size_t n) {
    need(n);
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= uint64_t(uint8_t(data[pos + i])) << (8 * i);
    pos += n;
    return v;
  };
  auto pop = [&]() {
    if (stack.empty() || (!marks.empty() && stack.size() <= marks.back())) bad("the stack is empty");
    PyRef v = std::move(stack.back());
    stack.pop_back();
    return v;
  };
  auto top = [&]() -> PyRef& {
    if (stack.empty() || (!marks.empty() && stack.size() <= marks.back())) bad("the stack is empty");
    return stack.back();
  };
  auto pop_mark = [&]() {
    if (marks.empty()) bad("no MARK to close");
    size_t m = marks.back();
    marks.pop_back();
    std::vector<PyRef> items(std::make_move_iterator(stack.begin() + std::ptrdiff_t(m)),
                             std::make_move_iterator(stack.end()));
    stack.resize(m);
    return items;
  };
  auto make_tuple = [&](std::vector<PyRef> items) {
    PyRef t = PyObject::make(Kind::tuple);
    for (const auto& i : items) nest(*t, i, fail);
    t->items = std::move(items);
    return t;
  };
  auto read_line = [&]() {
    size_t end = data.find('\n', pos);
    if (end == std::string_view::npos || end - pos > 256) bad("a GLOBAL name is not terminated");
    std::string s(data.substr(pos, end - pos));
    pos = end + 1;
    return s;
  };
  auto push_string = [&](size_t n) {
    need(n);
    PyRef s = PyObject::make(Kind::string);
    s->str.assign(data.substr(pos, n));
    pos += n;
    stack.push_back(std::move(s));
  };
  auto push_int = [&](int64_t v) {
    PyRef i = PyObject::make(Kind::integer);
    i->integer = v;
    stack.push_back(std::move(i));
  };
  auto set_items = [&](PyRef& dict, std::vector<PyRef>& kv) {
    if (dict->kind != Kind::dict) bad(str_cat("SETITEM(S) on a ", dict->kind_name(), ", not a dict"));
    if (kv.size() % 2 != 0) bad("SETITEMS with an odd number of values");
    for (size_t i = 0; i < kv.size(); i += 2) {
      nest(*dict, kv[i + 1], fail);
      bool replaced = false;
      // Keys the tensor loader cares about are strings and ints; a repeated key replaces, as in Python.
      for (auto& [k, v] : dict->pairs)
        if (k->kind == kv[i]->kind && k->kind == Kind::string && k->str == kv[i]->str) {
          v = kv[i + 1];
          replaced = true;
        }
      if (!replaced) dict->pairs.emplace_back(kv[i], kv[i + 1]);
    }
  };
  auto append_items = [&](PyRef& list, std::vector<PyRef>& items) {
    if (list->kind != Kind::list) bad(str_cat("APPEND(S) on a ", list->kind_name(), ", not a list"));
    for (auto& i : items) {
      nest(*list, i, fail);
      list->items.push_back(std::move(i));
    }
  };

  while (true) {
    if (pos >= data.size()) bad("the pickle ends without STOP");
    op_at_ = pos;
    op_ = uint8_t(data[pos++]);
    switch (op_) {
      case 0x80: {  // PROTO
        uint64_t v = read_u(1);
        if (v > 5) bad(str_cat("pickle protocol ", v, " is newer than any Python writes"));
        break;
      }
      case 0x95: read_u(8); break;  // FRAME: a length hint only
      case 'c': {
        std::string module = read_line();
        std::string name = read_line();
        stack.push_back(hooks_.find_class(module, name));
        break;
      }
      case 0x93: {  // STACK_GLOBAL
        PyRef name = pop(), module = pop();
        if (module->kind != Kind::string || name->kind != Kind::string) bad("STACK_GLOBAL needs two strings");
        stack.push_back(hooks_.find_class(module->str, name->str));
        break;
      }
      case 'Q': stack.push_back(hooks_.persistent_load(pop())); break;
      case 'R':
      case 0x81: {  // REDUCE: callable(*args); NEWOBJ: cls.__new__(cls, *args) — both left to the reduce hook
        PyRef args = pop(), callable = pop();
        if (args->kind != Kind::tuple)
          bad(str_cat(op_ == 'R' ? "REDUCE" : "NEWOBJ", " arguments are a ", args->kind_name(), ", not a tuple"));
        stack.push_back(hooks_.reduce(callable, args));
        break;
      }
      case 'b': {
        PyRef state = pop();
        hooks_.build(top(), state);
        break;
      }
      case '(': marks.push_back(stack.size()); break;
      case 't': stack.push_back(make_tuple(pop_mark())); break;
      case 0x85:
      case 0x86:
      case 0x87: {
        size_t n = size_t(op_ - 0x84);
        std::vector<PyRef> items(n);
        for (size_t i = n; i-- > 0;) items[i] = pop();
        stack.push_back(make_tuple(std::move(items)));
        break;
      }
      case ')': stack.push_back(PyObject::make(Kind::tuple)); break;
      case ']': stack.push_back(PyObject::make(Kind::list)); break;
      case '}': stack.push_back(PyObject::make(Kind::dict)); break;
      case 'a': {
        std::vector<PyRef> items{pop()};
        append_items(top(), items);
        break;
      }
      case 'e': {
        std::vector<PyRef> items = pop_mark();
        append_items(top(), items);
        break;
      }
      case 's': {
        PyRef v = pop(), k = pop();
        std::vector<PyRef> kv{k, v};
        set_items(top(), kv);
        break;
      }
      case 'u': {
        std::vector<PyRef> kv = pop_mark();
        set_items(top(), kv);
        break;
      }
      case 'X': push_string(size_t(read_u(4))); break;
      case 0x8c: push_string(size_t(read_u(1))); break;
      case 'J': push_int(int64_t(int32_t(uint32_t(read_u(4))))); break;
      case 'K': push_int(int64_t(read_u(1))); break;
      case 'M': push_int(int64_t(read_u(2))); break;
      case 0x8a: {  // LONG1: n little-endian two's complement bytes
        size_t n = size_t(read_u(1));
        if (n > 8) bad(str_cat("an integer of ", n, " bytes does not fit in 64 bits"));
        uint64_t v = n ? read_u(n) : 0;
        if (n > 0 && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~uint64_t(0) << (8 * n);  // sign-extend
        push_int(int64_t(v));
        break;
      }
      case 'G': {  // BINFLOAT: big-endian IEEE double
        need(8);
        uint64_t bits = 0;
        for (int i = 0; i < 8; ++i) bits = (bits << 8) | uint8_t(data[pos + size_t(i)]);
        pos += 8;
        PyRef f = PyObject::make(Kind::floating);
        f->floating = std::bit_cast<double>(bits);
        stack.push_back(std::move(f));
        break;
      }
      case 0x88:
      case 0x89: {
        PyRef b = PyObject::make(Kind::boolean);
        b->boolean = op_ == 0x88;
        stack.push_back(std::move(b));
        break;
      }
      case 'N': stack.push_back(PyObject::make(Kind::none)); break;
      case 'q': memo[read_u(1)] = top(); break;
      case 'r': memo[read_u(4)] = top(); break;
      case 0x94: {
        size_t id = memo.size();
        memo[id] = top();
        break;
      }
      case 'h':
      case 'j': {
        uint64_t id = read_u(op_ == 'h' ? 1 : 4);
        auto it = memo.find(id);
        if (it == memo.end()) bad(str_cat("memo entry ", id, " was never stored"));
        stack.push_back(it->second);
        break;
      }
      case '.': {
        PyRef result = pop();
        if (!stack.empty() || !marks.empty()) bad("values are left on the stack at STOP");
        return result;
      }
      default: bad("this opcode is not one torch.save writes for a state dict");
    }
  }
}

}  // namespace gb::detail
