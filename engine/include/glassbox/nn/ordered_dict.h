// glassbox/nn/ordered_dict.h — gb::OrderedDict<Key, Value>: libtorch's insertion-ordered dictionary, the type of
// named_parameters(), named_buffers(), named_children() and of state dicts.
//
//   for (const auto& p : net->named_parameters()) std::cout << p.key() << " " << p.value().sizes() << "\n";
//   gb::StateDict sd = net->state_dict();          // "fc1.weight" -> Tensor, in registration order
//   if (auto* w = sd.find("fc1.weight")) ...
//
// Keys are unique: insert() of an existing key is an error naming it (use operator[] or update() to replace).
// Lookup is a hash map; iteration is insertion order.
#pragma once

#include <cstddef>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "glassbox/core/error.h"
#include "glassbox/core/tensor.h"

namespace gb {

template <typename Key, typename Value>
class OrderedDict {
 public:
  class Item {
   public:
    Item(Key key, Value value) : pair_(std::move(key), std::move(value)) {}
    const Key& key() const noexcept { return pair_.first; }
    Value& value() noexcept { return pair_.second; }
    const Value& value() const noexcept { return pair_.second; }
    Value& operator*() noexcept { return pair_.second; }
    Value* operator->() noexcept { return &pair_.second; }
    const std::pair<Key, Value>& pair() const noexcept { return pair_; }

   private:
    std::pair<Key, Value> pair_;
  };

  explicit OrderedDict(std::string key_description = "Key") : key_description_(std::move(key_description)) {}
  OrderedDict(std::initializer_list<Item> items) {
    for (const auto& i : items) insert(i.key(), i.value());
  }

  Value& insert(const Key& key, Value value) {
    GB_CHECK(!index_.count(key), key_description_, " '", key, "' already defined");
    index_.emplace(key, items_.size());
    items_.emplace_back(key, std::move(value));
    return items_.back().value();
  }
  // Inserts or replaces (keeps the original position when replacing).
  Value& insert_or_assign(const Key& key, Value value) {
    auto it = index_.find(key);
    if (it == index_.end()) return insert(key, std::move(value));
    items_[it->second].value() = std::move(value);
    return items_[it->second].value();
  }
  void update(const OrderedDict& other) {
    for (const auto& i : other) insert_or_assign(i.key(), i.value());
  }
  bool erase(const Key& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return false;
    size_t at = it->second;
    items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(at));
    index_.clear();
    for (size_t i = 0; i < items_.size(); ++i) index_.emplace(items_[i].key(), i);
    return true;
  }

  Value* find(const Key& key) noexcept {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].value();
  }
  const Value* find(const Key& key) const noexcept {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].value();
  }
  bool contains(const Key& key) const noexcept { return index_.count(key) != 0; }
  Value& operator[](const Key& key) {
    auto* v = find(key);
    GB_CHECK(v != nullptr, key_description_, " '", key, "' is not defined");
    return *v;
  }
  const Value& operator[](const Key& key) const {
    auto* v = find(key);
    GB_CHECK(v != nullptr, key_description_, " '", key, "' is not defined");
    return *v;
  }
  Item& operator[](size_t i) { return items_.at(i); }
  const Item& operator[](size_t i) const { return items_.at(i); }

  std::vector<Key> keys() const {
    std::vector<Key> k;
    k.reserve(items_.size());
    for (const auto& i : items_) k.push_back(i.key());
    return k;
  }
  std::vector<Value> values() const {
    std::vector<Value> v;
    v.reserve(items_.size());
    for (const auto& i : items_) v.push_back(i.value());
    return v;
  }
  const std::vector<Item>& items() const noexcept { return items_; }
  size_t size() const noexcept { return items_.size(); }
  bool is_empty() const noexcept { return items_.empty(); }
  bool empty() const noexcept { return items_.empty(); }
  void clear() {
    items_.clear();
    index_.clear();
  }
  void reserve(size_t n) {
    items_.reserve(n);
    index_.reserve(n);
  }
  const std::string& key_description() const noexcept { return key_description_; }

  auto begin() { return items_.begin(); }
  auto end() { return items_.end(); }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }

 private:
  std::string key_description_ = "Key";
  std::vector<Item> items_;
  std::unordered_map<Key, size_t> index_;
};

// A state dict: dotted name -> tensor, in registration order (PyTorch's model.state_dict()). Optimizers,
// schedulers and GradScaler also flatten their state into one ("state.0.exp_avg", "param_groups.0.lr" as a 0-dim
// float64 tensor), so every state saves as one safetensors file.
using StateDict = OrderedDict<std::string, Tensor>;

}  // namespace gb
