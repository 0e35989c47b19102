// tests/engine/data/samplers_test.cpp — glassbox/data/samplers.h: libtorch's samplers hand out the index sequences
// libtorch's do (permutations, shares per replica, padding, epochs), and resume mid-epoch through save/load.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <sstream>

#include "data_test_util.h"

namespace S = gb::data::samplers;

namespace {
// An epoch's indices, batch_size at a time (and the batch sizes).
template <class Sampler>
std::vector<size_t> epoch(Sampler& s, size_t batch_size, std::vector<size_t>* sizes = nullptr) {
  std::vector<size_t> out;
  while (auto b = s.next(batch_size)) {
    if (sizes) sizes->push_back(b->size());
    out.insert(out.end(), b->begin(), b->end());
  }
  return out;
}
std::vector<size_t> iota(size_t n, size_t from = 0) {
  std::vector<size_t> v(n);
  std::iota(v.begin(), v.end(), from);
  return v;
}
}  // namespace

TEST_CASE("SequentialSampler: 0..n-1 in batches, the last one short; reset starts over, new_size resizes") {
  S::SequentialSampler s(10);
  std::vector<size_t> sizes;
  CHECK(epoch(s, 4, &sizes) == iota(10));
  CHECK(sizes == std::vector<size_t>{4, 4, 2});
  CHECK(s.index() == 10);
  CHECK_FALSE(s.next(4).has_value());
  s.reset();
  CHECK(s.index() == 0);
  CHECK(epoch(s, 3) == iota(10));
  s.reset(5);
  CHECK(s.size() == 5);
  CHECK(epoch(s, 100) == iota(5));
}

TEST_CASE("RandomSampler: each reset is a new permutation of [0, n), drawn from the default generator") {
  gb::manual_seed(7);
  S::RandomSampler a(50);
  std::vector<size_t> first = epoch(a, 8);
  std::vector<size_t> sorted = first;
  std::sort(sorted.begin(), sorted.end());
  CHECK(sorted == iota(50));
  CHECK(first != iota(50));
  a.reset();
  std::vector<size_t> second = epoch(a, 8);
  CHECK(second != first);
  gb::manual_seed(7);  // the same seed, the same orders
  S::RandomSampler b(50);
  CHECK(epoch(b, 50) == first);
  b.reset();
  CHECK(epoch(b, 3) == second);
  b.reset(4);
  CHECK(b.size() == 4);
  CHECK(epoch(b, 3).size() == 4);
  S::RandomSampler narrow(20, gb::kInt);  // index_dtype: the permutation's dtype
  std::vector<size_t> n = epoch(narrow, 7);
  std::sort(n.begin(), n.end());
  CHECK(n == iota(20));
}

TEST_CASE("DistributedRandomSampler: replicas share one permutation per epoch, disjoint shares, padded to equal") {
  const size_t n = 10, replicas = 3;  // ceil(10/3) = 4 each: 12 slots, 2 padded by wrapping around
  std::vector<size_t> all;
  for (size_t r = 0; r < replicas; ++r) {
    S::DistributedRandomSampler s(n, replicas, r);
    CHECK(s.size() == 4);
    std::vector<size_t> mine = epoch(s, 3);
    CHECK(mine.size() == 4);
    all.insert(all.end(), mine.begin(), mine.end());
  }
  std::multiset<size_t> counts(all.begin(), all.end());
  for (size_t i = 0; i < n; ++i) CHECK(counts.count(i) >= 1);
  CHECK(all.size() == 12);
  CHECK(counts.count(0) + counts.count(1) == 4);  // the padding repeats indices 0 and 1

  S::DistributedRandomSampler e0(n, 2, 0), again(n, 2, 0);
  std::vector<size_t> a = epoch(e0, 5);
  CHECK(epoch(again, 5) == a);  // the same epoch: the same share on every run (std::mt19937 seeded by the epoch)
  e0.set_epoch(1);
  e0.reset();
  CHECK(epoch(e0, 5) != a);

  S::DistributedRandomSampler strict(n, replicas, 2, /*allow_duplicates=*/false);
  CHECK(epoch(strict, 10).size() == 3);  // floor(10/3)
  CHECK_THROWS_WITH(S::DistributedRandomSampler(n, 2, 2), gbtest::contains("rank 2 is not in [0, 2)"));
}

TEST_CASE("DistributedSequentialSampler: rank r reads its contiguous share in order, wrapping at the end") {
  S::DistributedSequentialSampler r0(10, 3, 0), r2(10, 3, 2);
  CHECK(epoch(r0, 3) == std::vector<size_t>{0, 1, 2, 3});
  CHECK(epoch(r2, 3) == std::vector<size_t>{8, 9, 0, 1});
  r2.reset();
  CHECK(epoch(r2, 10) == std::vector<size_t>{8, 9, 0, 1});
  r2.reset(12);  // a new size moves the shares
  CHECK(epoch(r2, 10) == std::vector<size_t>{8, 9, 10, 11});
}

TEST_CASE("save/load through an archive resumes a sampler where it was, mid-epoch") {
  gb::manual_seed(12);
  S::RandomSampler random(10);
  random.next(4);
  S::SequentialSampler seq(9);
  seq.next(5);
  S::DistributedRandomSampler dist(11, 2, 1);
  dist.set_epoch(3);
  dist.reset();
  dist.next(2);
  gb::serialize::OutputArchive out, a, b, c;
  random.save(a);
  seq.save(b);
  dist.save(c);
  out.write("random", a);
  out.write("seq", b);
  out.write("dist", c);
  std::ostringstream bytes;
  out.save_to(bytes);

  gb::serialize::InputArchive in, ia, ib, ic;
  std::istringstream is(bytes.str());
  in.load_from(is);
  in.read("random", ia);
  in.read("seq", ib);
  in.read("dist", ic);
  S::RandomSampler random2(10);
  random2.load(ia);
  CHECK(random2.index() == 4);
  CHECK(*random2.next(6) == *random.next(6));  // the same permutation, from the same place
  S::SequentialSampler seq2(9);
  seq2.load(ib);
  CHECK(*seq2.next(10) == std::vector<size_t>{5, 6, 7, 8});
  S::DistributedRandomSampler dist2(11, 2, 1);
  dist2.load(ic);
  CHECK(dist2.epoch() == 3);
  CHECK(*dist2.next(10) == *dist.next(10));
  S::DistributedRandomSampler other_rank(11, 2, 0);
  CHECK_THROWS_WITH_AS(other_rank.load(ic), doctest::Contains("outside this replica's share"), gb::Error);
  S::SequentialSampler small(3);
  CHECK_THROWS_WITH_AS(small.load(ib), doctest::Contains("past this sampler's size 3"), gb::Error);
}
