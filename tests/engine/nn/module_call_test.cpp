// tests/engine/nn/module_call_test.cpp — what a module call records (engine/nn/module_call.cpp): the trace's
// modules and params rows and one module span per call with the module's id on the spans inside it; allocations
// attributed to the module's dotted path; full backward hooks when no input needs a gradient.
#include <doctest/doctest.h>

#include <thread>
#include <vector>

#include <glassbox/glassbox.h>

#include "instrument/session.h"
#include "traces/temp_dir.h"

namespace {

struct ScaleImpl : gb::nn::Module {
  ScaleImpl() { weight = register_parameter("weight", gb::ones({4, 4})); }
  gb::Tensor forward(const gb::Tensor& x) {
    gb::nn::detail::ModuleCallScope scope(*this);  // as the built-in layers do
    return gb::matmul(x, weight);
  }
  gb::Tensor weight;
};
GB_MODULE(Scale);

struct PairImpl : gb::nn::Module {
  PairImpl() {
    first = register_module("first", Scale());
    second = register_module("second", Scale());
  }
  gb::Tensor forward(const gb::Tensor& x) { return second(first(x).relu()); }
  Scale first{nullptr}, second{nullptr};
};
GB_MODULE(Pair);

struct ModelImpl : gb::nn::Module {
  ModelImpl() { body = register_module("body", Pair()); }
  gb::Tensor forward(const gb::Tensor& x) { return body(x); }
  Pair body{nullptr};
};
GB_MODULE(Model);

}  // namespace

TEST_CASE("a traced call writes the module tree, its parameters and one nested module span per call") {
  TempDir tmp;
  const std::string path = tmp.file("modules.db");
  Model model;
  {
    gb::trace::Session session(path);
    REQUIRE(session.active());
    for (int i = 0; i < 2; ++i) model(gb::ones({2, 4})).sum().backward();
  }
  const std::string mine = "id >= " + std::to_string(model->id());
  CHECK(sql_int(path, "SELECT COUNT(*) FROM modules WHERE " + mine) == 4);
  CHECK(sql_text(path, "SELECT type FROM modules WHERE path = 'body.first' AND " + mine) == "Scale");
  CHECK(sql_text(path, "SELECT type FROM modules WHERE path = '' AND " + mine) == "Model");
  CHECK(sql_int(path, "SELECT COUNT(*) FROM modules c JOIN modules p ON c.parent_id = p.id "
                      "WHERE c.path = 'body.second' AND p.path = 'body'") == 1);
  CHECK(sql_int(path, "SELECT COUNT(*) FROM params WHERE module_" + mine) == 2);
  CHECK(sql_text(path, "SELECT p.shape FROM params p JOIN modules m ON p.module_id = m.id "
                       "WHERE m.path = 'body.first' AND p.name = 'weight'") == "[4, 4]");
  CHECK(sql_int(path, "SELECT numel FROM params LIMIT 1") == 16);
  // spans of kind module (3): Model, body, body.first, body.second per call; the holder call and the built-in
  // forward's own scope make one span, not two
  CHECK(sql_int(path, "SELECT COUNT(*) FROM spans WHERE kind = 3") == 8);
  CHECK(sql_int(path, "SELECT COUNT(*) FROM spans s JOIN strings n ON s.name_id = n.id "
                      "WHERE s.kind = 3 AND n.text = 'body.first'") == 2);
  // nesting: body.first's span sits inside body's, which sits inside Model's
  CHECK(sql_int(path, "SELECT COUNT(*) FROM spans c JOIN spans p ON c.parent_id = p.id "
                      "JOIN strings cn ON c.name_id = cn.id JOIN strings pn ON p.name_id = pn.id "
                      "WHERE cn.text = 'body.first' AND pn.text = 'body'") == 2);
  // the matmul inside body.second is stamped with body.second's module id
  CHECK(sql_int(path, "SELECT COUNT(*) FROM spans s JOIN strings n ON s.name_id = n.id JOIN modules m "
                      "ON s.module_id = m.id WHERE s.kind = 0 AND n.text = 'matmul' AND m.path = 'body.second'") == 2);
}

TEST_CASE("allocations made inside a module carry its dotted path (snapshots, OOM reports)") {
  Model model;
  // relu's output (made in `body`, saved by body.second's matmul) and y (made in body.second) stay alive; the
  // output of body.first dies once relu has read it
  auto y = model(gb::ones({64, 4}));
  bool found_body = false, found_second = false;
  for (const auto& seg : gb::memory::snapshot(gb::Device(gb::kCPU)).segments)
    for (const auto& b : seg.blocks) {
      if (b.state != gb::memory::BlockState::active_allocated) continue;
      found_body = found_body || b.module == "body";
      found_second = found_second || b.module == "body.second";
    }
  CHECK(found_body);
  CHECK(found_second);
  CHECK(y.sizes() == std::vector<int64_t>{64, 4});
}

TEST_CASE("a full backward hook on a module whose inputs need no gradient still fires, with grad_input undefined") {
  Scale scale;
  int calls = 0;
  scale->register_full_backward_hook([&](gb::nn::Module& m, const gb::variable_list& gi, const gb::variable_list& go) {
    ++calls;
    CHECK(&m == scale.get());
    REQUIRE(gi.size() == 1);
    CHECK_FALSE(gi[0].defined());
    REQUIRE(go.size() == 1);
    CHECK(go[0].sum().item<float>() == doctest::Approx(8.0));
  });
  scale(gb::ones({2, 4})).sum().backward();
  CHECK(calls == 1);
  CHECK(scale->weight.grad().defined());
}

TEST_CASE("a model called from several threads at once while tracing writes each module row once") {
  TempDir tmp;
  const std::string path = tmp.file("threads.db");
  Model model;  // never called before: every cache (name, path, trace rows) is filled by the racing threads
  {
    gb::trace::Session session(path);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&] {
        gb::NoGradGuard no_grad;
        for (int i = 0; i < 50; ++i) model(gb::ones({2, 4}));
      });
    for (auto& t : threads) t.join();
  }
  // (modules traced earlier in this process are in the file too: the registry writes every module it knows)
  const std::string mine = "id >= " + std::to_string(model->id());
  CHECK(sql_int(path, "SELECT COUNT(*) FROM modules WHERE " + mine) == 4);
  CHECK(sql_int(path, "SELECT COUNT(DISTINCT id) FROM modules") == sql_int(path, "SELECT COUNT(*) FROM modules"));
  CHECK(sql_int(path, "SELECT COUNT(*) FROM params WHERE module_" + mine) == 2);
  CHECK(sql_int(path, "SELECT COUNT(*) FROM spans s JOIN strings n ON s.name_id = n.id "
                      "WHERE s.kind = 3 AND n.text = 'body.second'") == 200);
}

TEST_CASE("one model traced in two sessions: each file has its module rows once") {
  TempDir tmp;
  Model model;
  for (const char* name : {"first.db", "second.db"}) {
    const std::string path = tmp.file(name);
    {
      gb::trace::Session session(path);
      model(gb::ones({2, 4}));
    }
    CAPTURE(name);
    CHECK(sql_int(path, "SELECT COUNT(*) FROM modules WHERE id >= " + std::to_string(model->id())) == 4);
    CHECK(sql_int(path, "SELECT COUNT(*) FROM spans WHERE kind = 3") == 4);
  }
}
