// tests/engine/ops/conv_onednn_test.cpp — conv2d's oneDNN kernels: the build has them when it found oneDNN, they run
// for the geometries they take (and decline the rest), and they agree with glassbox's own im2col + GEMM forward and
// backward, conv_transpose2d included, for every option, at any thread count (the batch in slices over the pool).
#include <sqlite3.h>

#include <cstdlib>

#include "ops/conv_onednn.h"
#include "support/check.h"
#include "traces/temp_dir.h"

using gbtest::check_close;

namespace {

// Turns oneDNN off for the scope (gb::backends::mkldnn::enabled), as a user would to compare.
struct MkldnnOff {
  MkldnnOff() { gb::backends::mkldnn::enabled = false; }
  ~MkldnnOff() { gb::backends::mkldnn::enabled = true; }
};

struct Case {
  int64_t N, C, H, W, O, kH, kW, sh, sw, ph, pw, dh, dw, groups;
  bool bias;
};

gb::detail::ConvGeom geom(const Case& k) {
  gb::detail::ConvGeom g{};
  g.N = k.N, g.C = k.C, g.H = k.H, g.W = k.W, g.O = k.O, g.kH = k.kH, g.kW = k.kW;
  g.sH = k.sh, g.sW = k.sw, g.pH = k.ph, g.pW = k.pw, g.dH = k.dh, g.dW = k.dw, g.groups = k.groups;
  g.Ho = (k.H + 2 * k.ph - k.dh * (k.kH - 1) - 1) / k.sh + 1;
  g.Wo = (k.W + 2 * k.pw - k.dw * (k.kW - 1) - 1) / k.sw + 1;
  return g;
}

// conv2d's output and its input, weight and bias gradients for a fixed upstream gradient.
std::vector<gb::Tensor> conv_and_grads(const gb::Tensor& x0, const gb::Tensor& w0, const gb::Tensor& b0, const Case& k,
                                       const gb::Tensor& gy) {
  auto x = x0.detach().requires_grad_(), w = w0.detach().requires_grad_();
  auto b = b0.defined() ? b0.detach().requires_grad_() : gb::Tensor();
  auto y = gb::conv2d(x, w, b, {k.sh, k.sw}, {k.ph, k.pw}, {k.dh, k.dw}, k.groups);
  y.backward(gy);
  return {y, x.grad(), w.grad(), b.defined() ? b.grad() : gb::zeros({1})};
}

const Case kCases[] = {
    {2, 3, 7, 6, 4, 3, 3, 1, 1, 0, 0, 1, 1, 1, true},    {3, 4, 9, 8, 6, 3, 2, 2, 1, 1, 2, 1, 1, 2, false},
    {1, 2, 8, 8, 2, 3, 3, 2, 3, 2, 1, 2, 2, 2, true},    {4, 6, 5, 5, 3, 1, 1, 1, 1, 0, 0, 1, 1, 3, true},
    {2, 4, 5, 7, 8, 1, 1, 2, 2, 1, 0, 1, 1, 4, false},   {2, 2, 2, 1, 3, 5, 7, 1, 2, 2, 3, 1, 1, 1, true},
    {8, 32, 16, 16, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, false},  // the ResNet stack's convolution
    {4, 16, 15, 15, 32, 3, 3, 2, 2, 1, 1, 1, 1, 1, true},   // strided, odd size: oneDNN's right padding
    {3, 12, 9, 9, 12, 3, 3, 1, 1, 1, 1, 1, 1, 12, true},    // depthwise
    {2, 1, 10, 10, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, true},     // one input channel: im2col's by choice
};

}  // namespace

TEST_CASE("oneDNN is in the build when the build found it") {
  const char* expect = std::getenv("GLASSBOX_EXPECT_ONEDNN");  // set by tests/CMakeLists.txt from the configure
  if (expect) CHECK(gb::backends::mkldnn::is_available() == (std::string(expect) == "1"));
  CHECK(gb::backends::mkldnn::enabled);  // on by default, as torch.backends.mkldnn.enabled
}

TEST_CASE("oneDNN runs the geometries it takes and declines the rest") {
  std::vector<float> x(2 * 3 * 6 * 6, 0.5f), w(4 * 3 * 3 * 3, 0.25f), y(2 * 4 * 6 * 6, -1.f);
  const Case k{2, 3, 6, 6, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, false};
  const bool ran = gb::detail::onednn_conv_forward(geom(k), x.data(), w.data(), nullptr, y.data(), gb::kCPU);
  CHECK(ran == gb::backends::mkldnn::is_available());
  if (ran) CHECK(y[2 * 6 + 2] == doctest::Approx(27 * 0.5 * 0.25));  // an interior output: 27 products
  {
    MkldnnOff off;  // turned off: declined, nothing written
    y.assign(y.size(), -1.f);
    CHECK_FALSE(gb::detail::onednn_conv_forward(geom(k), x.data(), w.data(), nullptr, y.data(), gb::kCPU));
    CHECK(y[0] == -1.f);
  }
  const Case one{2, 1, 6, 6, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, false};  // one input channel: im2col + GEMM's
  CHECK_FALSE(gb::detail::onednn_conv_forward(geom(one), x.data(), w.data(), nullptr, y.data(), gb::kCPU));
  const Case empty{0, 3, 6, 6, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, false};  // an empty batch: glassbox's own
  CHECK_FALSE(gb::detail::onednn_conv_backward(geom(empty), x.data(), w.data(), y.data(), nullptr, w.data(), gb::kCPU));
}

TEST_CASE("oneDNN and im2col + GEMM agree: output, input, weight and bias gradients, for every option") {
  gb::manual_seed(7);
  for (const Case& k : kCases) {
    CAPTURE(k.C);
    CAPTURE(k.groups);
    CAPTURE(k.sh);
    auto x = gb::randn({k.N, k.C, k.H, k.W});
    auto w = gb::randn({k.O, k.C / k.groups, k.kH, k.kW}) * 0.3;
    auto b = k.bias ? gb::randn({k.O}) : gb::Tensor();
    const auto g = geom(k);
    auto gy = gb::randn({k.N, k.O, g.Ho, g.Wo});
    const auto ours = conv_and_grads(x, w, b, k, gy);
    std::vector<gb::Tensor> own;
    {
      MkldnnOff off;
      own = conv_and_grads(x, w, b, k, gy);
    }
    for (size_t i = 0; i < ours.size(); ++i) {
      CAPTURE(i);
      check_close(ours[i], own[i], 1e-4, 1e-4);
    }
  }
}

TEST_CASE("oneDNN's conv_transpose2d agrees with im2col + GEMM's, gradients included") {
  gb::manual_seed(8);
  auto x = gb::randn({3, 8, 7, 7});
  auto w = gb::randn({8, 3, 3, 3}) * 0.3;  // (in, out/groups, kH, kW)
  auto b = gb::randn({6});
  auto run = [&] {
    auto xr = x.detach().requires_grad_(), wr = w.detach().requires_grad_(), br = b.detach().requires_grad_();
    auto y = gb::conv_transpose2d(xr, wr, br, 2, 1, 1, 2);  // stride 2, padding 1, output_padding 1, groups 2
    y.backward(gb::ones_like(y) * 0.5 + gb::arange(y.numel()).view(y.sizes()).to(gb::kFloat) * 1e-3);
    return std::vector<gb::Tensor>{y, xr.grad(), wr.grad(), br.grad()};
  };
  const auto ours = run();
  CHECK(ours[0].sizes() == gb::IntArrayRef({3, 6, 14, 14}));
  std::vector<gb::Tensor> own;
  {
    MkldnnOff off;
    own = run();
  }
  for (size_t i = 0; i < ours.size(); ++i) check_close(ours[i], own[i], 1e-4, 1e-4);
}

TEST_CASE("oneDNN's team follows gb::set_num_threads") {
  gb::manual_seed(9);
  auto x = gb::randn({4, 16, 12, 12});
  auto w = gb::randn({16, 16, 3, 3}) * 0.2;
  auto two = gb::conv2d(x, w, {}, 1, 1);
  const int before = gb::get_num_threads();
  gb::set_num_threads(1);
  auto one = gb::conv2d(x, w, {}, 1, 1);
  gb::set_num_threads(before);
  check_close(one, two, 1e-5, 1e-5);
  // inside a parallel_for body (a DataLoader transform, say) it runs on the calling thread alone
  std::vector<gb::Tensor> outs(2);
  gb::parallel_for(0, 2, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) outs[size_t(i)] = gb::conv2d(x, w, {}, 1, 1);
  });
  for (const auto& o : outs) check_close(o, two, 1e-5, 1e-5);
}

// The batch runs in slices on glassbox's pool, each slice's primitives on an OpenMP team of one; the weight gradient
// is the slices' partial sums. At 1, 2 and 3 threads (slices of 5 samples: 5; 2 + 3; 1 + 2 + 2), grouped or not, the
// values are im2col + GEMM's.
TEST_CASE("the batch in slices over glassbox's threads gives im2col + GEMM's values at any thread count") {
  gb::manual_seed(10);
  const int before = gb::get_num_threads();
  for (const Case& k : {Case{5, 8, 9, 9, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, true},
                        Case{5, 8, 9, 9, 8, 3, 3, 2, 2, 1, 1, 1, 1, 4, false}}) {
    auto x = gb::randn({k.N, k.C, k.H, k.W});
    auto w = gb::randn({k.O, k.C / k.groups, k.kH, k.kW}) * 0.3;
    auto b = k.bias ? gb::randn({k.O}) : gb::Tensor();
    const auto g = geom(k);
    auto gy = gb::randn({k.N, k.O, g.Ho, g.Wo});
    std::vector<gb::Tensor> own;
    {
      MkldnnOff off;
      own = conv_and_grads(x, w, b, k, gy);
    }
    for (int threads : {1, 2, 3}) {
      CAPTURE(threads);
      CAPTURE(k.groups);
      gb::set_num_threads(threads);
      const auto ours = conv_and_grads(x, w, b, k, gy);
      for (size_t i = 0; i < ours.size(); ++i) {
        CAPTURE(i);
        check_close(ours[i], own[i], 1e-4, 1e-4);
      }
    }
  }
  gb::set_num_threads(before);
}

#ifndef GLASSBOX_NO_PROBES  // a build without probes writes no trace rows (make test-options)
namespace {
std::vector<std::string> column(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* st = nullptr;
  std::vector<std::string> out;
  if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK)
    while (sqlite3_step(st) == SQLITE_ROW) out.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}
}  // namespace

TEST_CASE("a trace shows oneDNN's steps inside conv2d and its backward, and says which oneDNN ran") {
  TempDir tmp;
  const std::string path = tmp.file("conv.db");
  {
    gb::trace::Session session(path);
    auto x = gb::randn({4, 8, 10, 10}).requires_grad_();
    auto w = (gb::randn({8, 8, 3, 3}) * 0.2).requires_grad_();
    gb::conv2d(x, w, {}, 1, 1).sum().backward();
  }
  const auto meta = column(path, "SELECT value FROM meta WHERE key = 'onednn'");
  REQUIRE(meta.size() == 1);
  if (!gb::backends::mkldnn::is_available()) {
    CHECK(meta[0].rfind("off: built without oneDNN", 0) == 0);
    return;
  }
  CHECK(std::isdigit(static_cast<unsigned char>(meta[0][0])));  // its version: "2.6.3"
  // each oneDNN step is an op span, named, under the op or backward node that ran it
  const char* sql =
      "SELECT s.text || ' < ' || ps.text FROM spans c JOIN strings s ON s.id = c.name_id "
      "JOIN spans p ON p.id = c.parent_id JOIN strings ps ON ps.id = p.name_id "
      "WHERE s.text LIKE 'onednn_%' ORDER BY c.start_ns";
  const auto rows = column(path, sql);
  auto has = [&](const std::string& row) { return std::find(rows.begin(), rows.end(), row) != rows.end(); };
  CHECK(has("onednn_convolution_forward < conv2d"));
  CHECK(has("onednn_reorder < conv2d"));
  CHECK(has("onednn_convolution_backward_data < ConvolutionBackward0"));
  CHECK(has("onednn_convolution_backward_weights < ConvolutionBackward0"));
  CHECK(has("onednn_reorder < ConvolutionBackward0"));
  // with more than one thread the batch ran in slices: their weight gradients were summed
  if (gb::get_num_threads() > 1) CHECK(has("onednn_weight_grad_sum < ConvolutionBackward0"));
}
#endif
