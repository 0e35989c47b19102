// tests/engine/nn/embedding_test.cpp — Embedding: N(0,1) init, padding row zero and without gradient, lookups,
// negative padding_idx, errors, repr.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

#include "glassbox/glassbox.h"
#include "support/check.h"
#include "support/module_scope.h"

TEST_CASE("Embedding starts N(0, 1) and looks rows up for any index shape") {
  gb::manual_seed(4);
  gb::nn::Embedding emb(1000, 200);
  auto w = gbtest::values(emb->weight);
  double s = 0, s2 = 0;
  for (double x : w) s += x, s2 += x * x;
  const double n = double(w.size()), mean = s / n;
  CHECK(std::fabs(mean) < 0.01);
  CHECK(std::sqrt(s2 / n - mean * mean) == doctest::Approx(1.0).epsilon(0.01));
  gb::Tensor idx = gb::tensor({3, 7, 3, 0}).view({2, 2});
  gb::Tensor out = emb(idx);
  CHECK(out.sizes() == gb::IntArrayRef({2, 2, 200}));
  CHECK(gb::equal(out[0][0], emb->weight[3]));
  CHECK(gb::equal(out[1][0], emb->weight[3]));
}

TEST_CASE("padding_idx: the row starts at zero and gets no gradient; negative counts from the end") {
  gb::nn::Embedding emb(gb::nn::EmbeddingOptions(5, 3).padding_idx(-1));
  CHECK(emb->options.padding_idx() == 4);
  gbtest::expect(emb->weight[4], {0, 0, 0});
  gb::Tensor idx = gb::tensor({4, 1, 4, 1, 2});
  emb(idx).sum().backward();
  gbtest::expect(emb->weight.grad(), {0, 0, 0, 2, 2, 2, 1, 1, 1, 0, 0, 0, 0, 0, 0});
  std::ostringstream os;
  emb->pretty_print(os);
  CHECK(os.str() == "Embedding(num_embeddings=5, embedding_dim=3, padding_idx=4)");

  CHECK_THROWS_WITH_AS(gb::nn::Embedding(gb::nn::EmbeddingOptions(5, 3).padding_idx(5)),
                       doctest::Contains("Padding_idx must be within num_embeddings"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::nn::Embedding(gb::nn::EmbeddingOptions(5, 3).padding_idx(-6)),
                       doctest::Contains("Padding_idx must be within num_embeddings"), gb::Error);
  gb::nn::Embedding plain(5, 3);
  CHECK_THROWS_AS(plain(gb::tensor({5})), gb::Error);  // out of range
}

TEST_CASE("Embedding's raw forward attributes its allocations to the module") {
  gb::nn::Embedding emb(5, 3);
  gb::Tensor idx = gb::tensor({1, 2});
  CHECK(gbtest::allocation_modules([&] { emb->forward(idx); }) == std::set<std::string>{"Embedding"});
}
