// tests/engine/core/dim_vector_test.cpp — glassbox/core/dim_vector.h: up to five values inside the object, more on
// the heap; copies, moves, growth, inserts and erases keep every value; and a tensor's shape of up to five dims lives
// inside its TensorImpl (no heap allocation for it).
#include <doctest/doctest.h>

#include <utility>
#include <vector>

#include <glassbox/glassbox.h>

namespace {

// Whether d's values live inside the object (no heap block).
bool inline_storage(const gb::DimVector& d) {
  const char* p = reinterpret_cast<const char*>(d.data());
  const char* self = reinterpret_cast<const char*>(&d);
  return p >= self && p < self + sizeof(gb::DimVector);
}

std::vector<int64_t> values_of(const gb::DimVector& d) { return std::vector<int64_t>(d.begin(), d.end()); }

}  // namespace

TEST_CASE("five values inline, six on the heap; conversions to and from vectors, lists and IntArrayRef") {
  gb::DimVector five = {1, 2, 3, 4, 5};
  CHECK(five.size() == 5);
  CHECK(inline_storage(five));
  gb::DimVector six = {1, 2, 3, 4, 5, 6};
  CHECK(six.size() == 6);
  CHECK_FALSE(inline_storage(six));
  CHECK(values_of(six) == std::vector<int64_t>{1, 2, 3, 4, 5, 6});

  const std::vector<int64_t> v = {7, 8, 9};
  gb::DimVector from_vector = v;
  gb::DimVector from_ref = gb::IntArrayRef(v);
  CHECK(from_vector == from_ref);
  CHECK(from_vector.vec() == v);
  const gb::IntArrayRef back = from_vector;
  CHECK(back.size() == 3);
  CHECK(back.data() == from_vector.data());
  CHECK(back == gb::IntArrayRef(v));
  CHECK(gb::DimVector(4, -1).vec() == std::vector<int64_t>{-1, -1, -1, -1});
  CHECK(gb::DimVector().empty());
  CHECK(gb::DimVector{1, 2} != gb::DimVector{1, 3});
  CHECK(gb::DimVector{1, 2} != gb::DimVector{1, 2, 3});
}

TEST_CASE("copies and moves keep the values, inline and on the heap, and leave a moved-from DimVector empty") {
  for (int64_t n : {0, 3, 5, 6, 12}) {
    CAPTURE(n);
    gb::DimVector a;
    for (int64_t i = 0; i < n; ++i) a.push_back(i * 10);
    const std::vector<int64_t> want = values_of(a);
    CHECK(inline_storage(a) == (n <= 5));

    gb::DimVector copy = a;
    CHECK(values_of(copy) == want);
    if (n > 0) CHECK(copy.data() != a.data());  // its own values
    gb::DimVector assigned = {99};
    assigned = a;
    CHECK(values_of(assigned) == want);

    const int64_t* heap_block = a.data();
    gb::DimVector moved = std::move(a);
    CHECK(values_of(moved) == want);
    if (n > 5) CHECK(moved.data() == heap_block);  // the heap block changes hands, no copy
    CHECK(a.empty());                               // NOLINT: moved-from, in a valid state
    CHECK(inline_storage(a));
    a.push_back(1);  // usable again
    CHECK(values_of(a) == std::vector<int64_t>{1});

    gb::DimVector move_assigned = {1, 2, 3, 4, 5, 6, 7};
    move_assigned = std::move(moved);
    CHECK(values_of(move_assigned) == want);
    gb::DimVector& same = move_assigned;
    move_assigned = same;  // self-assignment keeps the values
    CHECK(values_of(move_assigned) == want);
  }
}

TEST_CASE("growth, resize, insert_at, erase_at and assign from the DimVector's own values") {
  gb::DimVector d = {1, 2, 3, 4, 5};
  d.push_back(6);  // past the inline capacity: moves to the heap with every value
  CHECK(values_of(d) == std::vector<int64_t>{1, 2, 3, 4, 5, 6});
  d.resize(8, 7);
  CHECK(values_of(d) == std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 7});
  d.resize(2);
  CHECK(values_of(d) == std::vector<int64_t>{1, 2});

  gb::DimVector e = {1, 2, 3};
  e.insert_at(0, 0);
  e.insert_at(4, 4);
  e.insert_at(2, 9);
  CHECK(values_of(e) == std::vector<int64_t>{0, 1, 9, 2, 3, 4});
  e.erase_at(2);
  e.erase_at(0);
  e.erase_at(3);
  CHECK(values_of(e) == std::vector<int64_t>{1, 2, 3});
  e.pop_back();
  CHECK(e.back() == 2);
  CHECK(e.front() == 1);

  gb::DimVector f = {1, 2, 3, 4};
  f.assign(f.begin() + 1, f.end());  // from its own values, shorter
  CHECK(values_of(f) == std::vector<int64_t>{2, 3, 4});
  gb::DimVector g = {1, 2, 3, 4, 5};
  std::vector<int64_t> longer(g.begin(), g.end());
  longer.push_back(6);
  g.assign(longer.begin(), longer.end());
  CHECK(values_of(g) == longer);
  g.clear();
  CHECK(g.empty());
}

TEST_CASE("a tensor's sizes and strides of up to five dims live inside its TensorImpl, views' too") {
  auto inside_impl = [](const gb::Tensor& t) {
    const char* impl = reinterpret_cast<const char*>(t.unsafe_impl());
    const char* s = reinterpret_cast<const char*>(t.sizes().data());
    const char* st = reinterpret_cast<const char*>(t.strides().data());
    return s >= impl && s < impl + sizeof(gb::TensorImpl) && st >= impl && st < impl + sizeof(gb::TensorImpl);
  };
  gb::Tensor x = gb::zeros({2, 3, 4, 5, 6});
  CHECK(inside_impl(x));
  CHECK(inside_impl(x.transpose(0, 4)));
  CHECK(inside_impl(x.view({6, 4, 5, 6})));
  CHECK(inside_impl(x.select(1, 2)));
  CHECK(inside_impl(x[0].unsqueeze(0)));
  CHECK(x.transpose(0, 4).sizes() == gb::IntArrayRef({6, 3, 4, 5, 2}));
  CHECK(x.transpose(0, 4).strides() == gb::IntArrayRef({1, 120, 30, 6, 360}));
  gb::Tensor seven = gb::zeros({1, 1, 1, 2, 1, 1, 3});  // more dims than the inline five: still right
  CHECK_FALSE(inside_impl(seven));
  CHECK(seven.sizes() == gb::IntArrayRef({1, 1, 1, 2, 1, 1, 3}));
  CHECK(seven.strides() == gb::IntArrayRef({6, 6, 6, 3, 3, 3, 1}));
  CHECK(seven.squeeze().sizes() == gb::IntArrayRef({2, 3}));
}
