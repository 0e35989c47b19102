// Tests engine/monitor/names.cpp: module labels in messages and each parameter's id and "path.name" label, as the
// module scope notes them when a module first runs under a trace.
#include <doctest/doctest.h>

#include <glassbox/glassbox.h>

#include <filesystem>

#include "monitor/monitor.h"
#include "monitor/run.h"

namespace md = gb::monitor::detail;

TEST_CASE("module_label: path and type, the root module, unknown ids, no module") {
  md::note_module(9001, "encoder.fc1", "Linear");
  md::note_module(9002, "", "Net");
  CHECK(md::module_label(9001) == "module encoder.fc1 (Linear)");
  CHECK(md::module_label(9002) == "the root module (Net)");
  CHECK(md::module_label(9999) == "module #9999");
  CHECK(md::module_label(-1) == "no module");
}

TEST_CASE("a traced module call notes its parameters: ids and labels for grad_stats") {
  struct Net : gb::nn::Module {
    Net() { fc = register_module("fc", gb::nn::Linear(2, 2)); }
    gb::nn::Linear fc{nullptr};
  };
  auto net = std::make_shared<Net>();
  int64_t id = 0, module = 0;
  std::string label;
  CHECK(!md::param_name(net->fc->weight.unsafe_impl(), id, module, label));  // not traced yet
  auto tmp = std::filesystem::temp_directory_path() / "glassbox-names-test.db";
  {
    gb::trace::Session session(tmp.string());
    net->fc->forward(gb::ones({1, 2}));
  }
  std::filesystem::remove(tmp);
  REQUIRE(md::param_name(net->fc->weight.unsafe_impl(), id, module, label));
  CHECK(label == "fc.weight");
  CHECK(id > 0);
  CHECK(module == net->fc->id());
  REQUIRE(md::param_name(net->fc->bias.unsafe_impl(), id, module, label));
  CHECK(label == "fc.bias");
}
