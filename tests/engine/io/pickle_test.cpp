// tests/engine/io/pickle_test.cpp — the pickle VM on hand-written opcodes: every value opcode it accepts (with the
// bytes Python writes for them), memo sharing, marks, the hooks, and the errors for what it refuses.
#include <doctest/doctest.h>

#include <string>

#include "glassbox/core/error.h"
#include "io/pickle.h"

using gb::detail::PyObject;
using gb::detail::PyRef;
using gb::detail::Unpickler;
using Kind = PyObject::Kind;

namespace {

// Hooks that allow one global, "allowed.thing", whose call returns the tuple of its arguments' count.
Unpickler::Hooks hooks() {
  Unpickler::Hooks h;
  h.find_class = [](const std::string& m, const std::string& n) -> PyRef {
    if (m + "." + n != "allowed.thing") throw gb::Error("refused " + m + "." + n);
    auto g = PyObject::make(Kind::global);
    g->str = m + "." + n;
    return g;
  };
  h.persistent_load = [](const PyRef& pid) {
    auto o = PyObject::make(Kind::object);
    o->str = "pid:" + pid->str;
    return o;
  };
  h.reduce = [](const PyRef&, const PyRef& args) {
    auto i = PyObject::make(Kind::integer);
    i->integer = int64_t(args->items.size());
    return i;
  };
  h.build = [](const PyRef& obj, const PyRef&) { obj->note = "built"; };
  return h;
}

PyRef run(const std::string& bytes) { return Unpickler("test.pkl", hooks()).load(bytes); }
std::string error(const std::string& bytes) {
  try {
    run(bytes);
  } catch (const gb::Error& e) {
    return e.what();
  }
  return "";
}
std::string S(const char* s, size_t n) { return std::string(s, n); }

}  // namespace

TEST_CASE("integers, floats, strings, booleans and None") {
  // pickle.dumps((1, 300, -5, 2**40, -2**40, 1.5, 'hé', True, False, None), protocol=2), written out by hand:
  std::string b = S("\x80\x02", 2) + "(K\x01" + S("M\x2c\x01", 3) + S("J\xfb\xff\xff\xff", 5) +
                  S("\x8a\x06\x00\x00\x00\x00\x00\x01", 8) + S("\x8a\x06\x00\x00\x00\x00\x00\xff", 8) +
                  S("G\x3f\xf8\x00\x00\x00\x00\x00\x00", 9) + S("X\x03\x00\x00\x00h\xc3\xa9", 8) +
                  S("\x88\x89N", 3) + "t.";
  PyRef t = run(b);
  REQUIRE(t->kind == Kind::tuple);
  REQUIRE(t->items.size() == 10);
  CHECK(t->items[0]->integer == 1);
  CHECK(t->items[1]->integer == 300);
  CHECK(t->items[2]->integer == -5);
  CHECK(t->items[3]->integer == (int64_t(1) << 40));
  CHECK(t->items[4]->integer == -(int64_t(1) << 40));
  CHECK(t->items[5]->floating == 1.5);
  CHECK(t->items[6]->str == "h\xc3\xa9");
  CHECK(t->items[7]->boolean);
  CHECK(!t->items[8]->boolean);
  CHECK(t->items[9]->kind == Kind::none);
  // LONG1 with 8 bytes and with 0 bytes; SHORT_BINUNICODE; TUPLE3; EMPTY_TUPLE; TUPLE2.
  PyRef u = run(S("\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f\x8a\x00\x8c\x02hi\x87", 17) + ")\x86.");
  REQUIRE(u->kind == Kind::tuple);
  REQUIRE(u->items.size() == 2);
  REQUIRE(u->items[0]->items.size() == 3);
  CHECK(u->items[0]->items[0]->integer == INT64_MAX);
  CHECK(u->items[0]->items[1]->integer == 0);
  CHECK(u->items[0]->items[2]->str == "hi");
  CHECK(u->items[1]->kind == Kind::tuple);
  CHECK(u->items[1]->items.empty());
  CHECK(run(S("\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f.", 11))->integer == INT64_MAX);
  CHECK(run(S("\x8a\x00.", 3))->integer == 0);
  CHECK(run(S("\x8c\x02hi.", 5))->str == "hi");
}

TEST_CASE("lists, dicts, the memo and frames") {
  // [1, 2, 3] with APPEND and APPENDS; {'a': list, 'b': list} via SETITEMS with BINGET and LONG_BINGET; then
  // APPEND 4 through the memo: (list, dict, list).
  std::string b = S("\x80\x04\x95\x00\x00\x00\x00\x00\x00\x00\x00", 11) + S("]q\x00", 3) + "K\x01" "a" +
                  "(K\x02K\x03" "e" + "}\x94(" + S("X\x01\x00\x00\x00" "a", 6) + S("h\x00", 2) + "\x8c\x01" "b" +
                  S("j\x00\x00\x00\x00", 5) + "u" + S("h\x00", 2) + "K\x04" "a" + "\x87.";
  PyRef t = run(b);
  REQUIRE(t->kind == Kind::tuple);
  REQUIRE(t->items.size() == 3);
  PyRef list = t->items[0], dict = t->items[1];
  REQUIRE(list->kind == Kind::list);
  CHECK(t->items[2].get() == list.get());
  // The memo holds the same list: the APPEND after SETITEMS shows through every reference.
  CHECK(list->items.size() == 4);
  CHECK(list->items[3]->integer == 4);
  REQUIRE(dict->kind == Kind::dict);
  REQUIRE(dict->pairs.size() == 2);
  CHECK(dict->pairs[0].first->str == "a");
  CHECK(dict->pairs[1].first->str == "b");
  CHECK(dict->pairs[0].second.get() == list.get());
  CHECK(dict->pairs[1].second.get() == list.get());
  // SETITEM replaces a repeated string key, as in Python.
  PyRef d = run("}" + S("X\x01\x00\x00\x00" "a", 6) + "K\x01s" + S("X\x01\x00\x00\x00" "a", 6) + "K\x02s.");
  REQUIRE(d->pairs.size() == 1);
  CHECK(d->pairs[0].second->integer == 2);
  // LONG_BINPUT / LONG_BINGET and MEMOIZE numbering.
  PyRef m = run(S("K\x07r\x05\x00\x00\x00\x94j\x05\x00\x00\x00h\x01\x87.", 17));
  CHECK(m->items.size() == 3);
  CHECK(m->items[2]->integer == 7);
}

TEST_CASE("globals, calls, persistent ids and BUILD go through the hooks") {
  PyRef r = run("callowed\nthing\n(K\x01K\x02tR.");
  CHECK(r->integer == 2);
  CHECK(run(S("X\x01\x00\x00\x00kQ.", 8))->str == "pid:k");  // BINPERSID hands the popped id to the hook
  CHECK(run(S("\x8c\x07" "allowed\x8c\x05thing\x93)R.", 20))->integer == 0);  // STACK_GLOBAL
  CHECK(run("}N" "b.")->note == "built");
  CHECK_THROWS_WITH_AS(run("cos\nsystem\n."), "refused os.system", gb::Error);
}

TEST_CASE("what the VM refuses, it names with the offset") {
  CHECK(error(S("\x80\x02\x8f.", 4)).find("opcode EMPTY_SET 0x8f") != std::string::npos);
  CHECK(error(S("\x80\x02\x8f.", 4)).find("at byte 2") != std::string::npos);
  CHECK(error("K\x01").find("ends without STOP") != std::string::npos);
  CHECK(error(S("X\xff\x00\x00\x00" "ab.", 8)).find("needs 255 bytes but the pickle ends") != std::string::npos);
  CHECK(error("a.").find("the stack is empty") != std::string::npos);
  CHECK(error("(t").find("ends without STOP") != std::string::npos);
  CHECK(error("K\x01(.").find("the stack is empty") != std::string::npos);  // STOP cannot pop past a MARK
  CHECK(error("K\x01K\x02.").find("left on the stack") != std::string::npos);
  CHECK(error("h\x09.").find("memo entry 9 was never stored") != std::string::npos);
  CHECK(error("K\x01K\x02K\x03s.").find("SETITEM(S) on a int") != std::string::npos);
  CHECK(error("K\x01K\x02R.").find("REDUCE arguments are a int") != std::string::npos);
  CHECK(error(S("\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00\x01.", 12)).find("does not fit in 64 bits") !=
        std::string::npos);
  CHECK(error("callowed\nthing").find("GLOBAL name is not terminated") != std::string::npos);
  CHECK(error(S("\x80\x09.", 3)).find("protocol 9") != std::string::npos);
  // Deep nesting is refused before it can exhaust the stack when freed.
  std::string deep = "]";
  for (int i = 0; i < 200; ++i) deep += "]";
  for (int i = 0; i < 200; ++i) deep += "a";
  CHECK(error(deep + ".").find("nest deeper than 100 levels") != std::string::npos);
  CHECK(error("K\x01K\x02t.").find("no MARK to close") != std::string::npos);
  // Messages carry the context and the way out.
  CHECK(error("a.").find("test.pkl: ") == 0);
  CHECK(error("a.").find("torch.save(model.state_dict(), path)") != std::string::npos);
}
