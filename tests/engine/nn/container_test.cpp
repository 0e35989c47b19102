// tests/engine/nn/container_test.cpp — ModuleList and ModuleDict: names, order, insert renumbering, typed access,
// update/pop, errors, and dotted parameter names inside a parent module.
#include <doctest/doctest.h>

#include <sstream>

#include "glassbox/glassbox.h"

namespace {

struct StackImpl : gb::nn::Module {
  StackImpl() {
    layers = register_module("layers", gb::nn::ModuleList(gb::nn::Linear(4, 4), gb::nn::ReLU(), gb::nn::Linear(4, 2)));
    heads = register_module("heads", gb::nn::ModuleDict({{"cls", gb::nn::Linear(2, 3)}}));
  }
  gb::nn::ModuleList layers{nullptr};
  gb::nn::ModuleDict heads{nullptr};
};
GB_MODULE(Stack);

}  // namespace

TEST_CASE("ModuleList: children named 0, 1, ...; named_parameters read layers.0.weight") {
  Stack net;
  CHECK(net->named_parameters().keys() == std::vector<std::string>{"layers.0.weight", "layers.0.bias",
                                                                   "layers.2.weight", "layers.2.bias",
                                                                   "heads.cls.weight", "heads.cls.bias"});
  CHECK(net->layers->size() == 3);
  CHECK(net->layers[1]->name() == "ReLU");
  CHECK(net->layers->at<gb::nn::LinearImpl>(2).options.out_features() == 2);
  CHECK(net->layers->ptr<gb::nn::LinearImpl>(0)->options.in_features() == 4);
  CHECK(net->layers->ptr(2)->path() == "layers.2");
  CHECK_THROWS_WITH_AS(net->layers->at<gb::nn::LinearImpl>(1), doctest::Contains("is a ReLU, not the requested type"),
                       gb::Error);
  CHECK_THROWS_AS(net->layers[7], gb::IndexError);
  std::vector<std::string> names;
  for (const auto& m : *net->layers) names.push_back(m->name());
  CHECK(names == std::vector<std::string>{"Linear", "ReLU", "Linear"});
  // a forward over the list
  gb::Tensor x = gb::randn({5, 4});
  for (const auto& m : *net->layers) {
    if (auto lin = std::dynamic_pointer_cast<gb::nn::LinearImpl>(m))
      x = lin->forward(x);
    else
      x = std::dynamic_pointer_cast<gb::nn::ReLUImpl>(m)->forward(x);
  }
  CHECK(x.sizes() == gb::IntArrayRef({5, 2}));
}

TEST_CASE("ModuleList: insert moves the later ones up a name (PyTorch's insert); extend appends") {
  gb::nn::ModuleList list;
  gb::nn::Linear a(1, 1), b(2, 2), c(3, 3);
  list->push_back(a);
  list->push_back(b);
  list->insert(1, c);
  CHECK(list->size() == 3);
  CHECK(list[1].get() == c.ptr().get());
  CHECK(list[2].get() == b.ptr().get());
  auto children = list->named_children();
  CHECK(children.keys() == std::vector<std::string>{"0", "1", "2"});
  CHECK(children["1"].get() == c.ptr().get());
  CHECK(children["2"].get() == b.ptr().get());
  list->insert(3, gb::nn::Tanh());
  CHECK(list[3]->name() == "Tanh");
  CHECK_THROWS_AS(list->insert(9, gb::nn::Tanh()), gb::IndexError);

  gb::nn::ModuleList more{gb::nn::ReLU(), gb::nn::SiLU()};
  list->extend(*more);
  CHECK(list->size() == 6);
  CHECK(list->named_children().keys().back() == "5");
  CHECK(list[5]->name() == "SiLU");
  list->extend(std::vector<std::shared_ptr<gb::nn::Module>>{gb::nn::Sigmoid().ptr()});
  CHECK(list[6]->name() == "Sigmoid");
  std::ostringstream os;
  os << *list;
  CHECK(os.str().find("ModuleList(\n  (0): Linear(in_features=1, out_features=1, bias=true)") == 0);
}

TEST_CASE("ModuleDict: keys in insertion order, update replaces in place, pop removes") {
  gb::nn::ModuleDict dict({{"b", gb::nn::Linear(2, 2)}, {"a", gb::nn::ReLU().ptr()}});
  CHECK(dict->keys() == std::vector<std::string>{"b", "a"});
  CHECK(dict->size() == 2);
  CHECK(dict->contains("a"));
  CHECK(!dict->contains("c"));
  CHECK(dict["a"]->name() == "ReLU");
  CHECK(dict->at<gb::nn::LinearImpl>("b").options.in_features() == 2);
  CHECK_THROWS_WITH_AS(dict["zz"], doctest::Contains("no module under key \"zz\""), gb::IndexError);

  gb::nn::Linear replacement(2, 5);
  dict->update(std::vector<std::pair<std::string, std::shared_ptr<gb::nn::Module>>>{{"c", gb::nn::Tanh().ptr()},
                                                                                    {"b", replacement.ptr()}});
  CHECK(dict->keys() == std::vector<std::string>{"b", "a", "c"});
  CHECK(dict["b"].get() == replacement.ptr().get());
  CHECK(dict->named_parameters().keys() == std::vector<std::string>{"b.weight", "b.bias"});
  CHECK(dict->values().size() == 3);
  auto items = dict->items();
  CHECK(items[2].first == "c");
  CHECK(items[2].second->name() == "Tanh");

  auto popped = dict->pop("b");
  CHECK(popped.get() == replacement.ptr().get());
  CHECK(dict->keys() == std::vector<std::string>{"a", "c"});
  CHECK(dict->named_children().keys() == std::vector<std::string>{"a", "c"});
  CHECK(dict->named_parameters().is_empty());
  dict->insert("d", gb::nn::Linear(1, 1));
  CHECK(dict->named_children().keys() == std::vector<std::string>{"a", "c", "d"});
  dict->clear();
  CHECK(dict->size() == 0);
  CHECK(dict->named_children().is_empty());
}
