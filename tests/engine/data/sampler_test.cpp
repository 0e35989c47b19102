// tests/engine/data/sampler_test.cpp — engine/data/sampler.cpp: index lists per epoch, batches, seeds.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <numeric>

#include "data_test_util.h"

using namespace gb::data;

namespace {
std::vector<int64_t> sorted(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}
// 0, 1, ..., n - 1
std::vector<int64_t> first_n(int64_t n) {
  std::vector<int64_t> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}
}  // namespace

TEST_CASE("sequential and random samplers; a seeded sampler repeats, epochs differ") {
  gb::Generator g(1);
  CHECK(SequentialSampler(5).indices(g) == first_n(5));
  RandomSampler r(50);
  auto a = r.indices(g), b = r.indices(g);
  CHECK(sorted(a) == first_n(50));
  CHECK(a != b);
  CHECK(a != first_n(50));
  CHECK(RandomSampler(50, false, std::nullopt, 7).indices(g) == RandomSampler(50, false, std::nullopt, 7).indices(g));
  auto rep = RandomSampler(3, true, 100).indices(g);
  CHECK(rep.size() == 100);
  CHECK(*std::max_element(rep.begin(), rep.end()) == 2);
  CHECK(RandomSampler(4, false, 10).indices(g).size() == 10);
  CHECK_THROWS_WITH(RandomSampler(4, false, 0),
                    "num_samples should be a positive integer value, but got num_samples=0");
}

TEST_CASE("subset, weighted and distributed samplers") {
  gb::Generator g(2);
  SubsetRandomSampler s({10, 20, 30, 40});
  CHECK(sorted(s.indices(g)) == std::vector<int64_t>{10, 20, 30, 40});
  WeightedRandomSampler w({0.0, 1.0, 3.0}, 4000);
  std::map<int64_t, int> count;
  for (int64_t i : w.indices(g)) ++count[i];
  CHECK(count[0] == 0);
  CHECK(count[2] > 2 * count[1]);  // ~3000 vs ~1000
  CHECK(count[1] > 800);
  auto no_rep = WeightedRandomSampler({1, 1, 1, 0}, 3, false).indices(g);
  CHECK(sorted(no_rep) == std::vector<int64_t>{0, 1, 2});
  CHECK_THROWS_WITH(WeightedRandomSampler({1, 0}, 2, false), gbtest::contains("cannot draw 2 samples"));
  std::vector<int64_t> all;
  for (int64_t rank = 0; rank < 3; ++rank) {
    DistributedSampler d(10, 3, rank, true, 5);
    CHECK(d.size() == 4);
    auto mine = d.indices(g);
    CHECK(mine.size() == 4);
    all.insert(all.end(), mine.begin(), mine.end());
  }
  auto u = sorted(all);
  u.erase(std::unique(u.begin(), u.end()), u.end());
  CHECK(u == first_n(10));  // the ranks together cover everything (12 = 10 + 2 padded repeats)
  CHECK_THROWS_WITH(DistributedSampler(10, 2, 2), "Invalid rank 2, rank should be in the interval [0, 1]");
  DistributedSampler dropping(10, 3, 0, false, 0, /*drop_last=*/true);  // floor(10 / 3): no padded repeats
  CHECK(dropping.drop_last());
  CHECK_FALSE(DistributedSampler(10, 3, 0).drop_last());
  CHECK(dropping.size() == 3);
  CHECK(dropping.indices(g) == std::vector<int64_t>{0, 3, 6});
}

TEST_CASE("BatchSampler groups indices; drop_last drops the short batch") {
  gb::Generator g(3);
  for (bool drop : {false, true}) {
    BatchSampler b(std::make_shared<SequentialSampler>(7), 3, drop);
    b.reset(g);
    std::vector<std::vector<int64_t>> got;
    while (auto x = b.next()) got.push_back(*x);
    CHECK(int64_t(got.size()) == b.size());
    CHECK(got[0] == std::vector<int64_t>{0, 1, 2});
    CHECK(got.size() == (drop ? 2u : 3u));
    if (!drop) CHECK(got[2] == std::vector<int64_t>{6});
  }
  CHECK_THROWS_WITH(BatchSampler(std::make_shared<SequentialSampler>(7), 0, false),
                    "batch_size should be a positive integer value, but got batch_size=0");
}
