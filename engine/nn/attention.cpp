// engine/nn/attention.cpp — MultiheadAttention, composed from differentiable ops (linear, bmm, softmax, dropout) in
// the order of PyTorch's F.multi_head_attention_forward.
#include "glassbox/nn/modules/attention.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "glassbox/autograd/grad_mode.h"
#include "glassbox/nn/init.h"
#include "glassbox/ops/factory.h"
#include "glassbox/ops/linalg.h"
#include "glassbox/ops/nn.h"
#include "glassbox/ops/pointwise.h"
#include "glassbox/ops/shape.h"

namespace gb::nn {
namespace {

// A bool mask (true = not attended) as an additive float mask of `dtype`; a float mask as is.
Tensor additive_mask(const Tensor& mask, ScalarType dtype, const char* what) {
  if (mask.scalar_type() == kBool)
    return gb::zeros(mask.sizes(), TensorOptions().dtype(dtype).device(mask.device()))
        .masked_fill(mask, -std::numeric_limits<double>::infinity());
  GB_CHECK(mask.is_floating_point(), "only bool and floating types of ", what, " are supported (got ",
           to_string(mask.scalar_type()), ")");
  return mask.to(dtype);
}

std::string shape_str(IntArrayRef s) {
  std::ostringstream os;
  os << "torch.Size([";
  for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  os << "])";
  return os.str();
}

}  // namespace

MultiheadAttentionImpl::MultiheadAttentionImpl(const MultiheadAttentionOptions& options_) : options(options_) {
  const int64_t E = options.embed_dim(), H = options.num_heads();
  GB_CHECK(E > 0 && H > 0, "MultiheadAttention: embed_dim and num_heads must be positive (got ", E, " and ", H, ")");
  GB_CHECK(E % H == 0, "embed_dim must be divisible by num_heads (got embed_dim=", E, ", num_heads=", H, ")");
  GB_CHECK(options.dropout() >= 0 && options.dropout() <= 1, "dropout probability has to be between 0 and 1, but got ",
           options.dropout());
  head_dim = E / H;
  in_proj_weight = register_parameter("in_proj_weight", gb::empty({3 * E, E}));
  in_proj_bias = register_parameter("in_proj_bias", options.bias() ? gb::empty({3 * E}) : Tensor(), options.bias());
  out_proj = register_module("out_proj", Linear(LinearOptions(E, E).bias(options.bias())));
  reset_parameters();
}

void MultiheadAttentionImpl::reset_parameters() {
  init::xavier_uniform_(in_proj_weight);
  if (in_proj_bias.defined()) {
    init::zeros_(in_proj_bias);
    init::zeros_(out_proj->bias);
  }
}

std::tuple<Tensor, Tensor> MultiheadAttentionImpl::forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                                           const Tensor& key_padding_mask, bool need_weights,
                                                           const Tensor& attn_mask, bool average_attn_weights) {
  detail::ModuleCallScope scope(*this);
  GB_CHECK(query.dim() == 3 || query.dim() == 2, "query should be unbatched 2D or batched 3D tensor but received ",
           query.dim(), "-D query tensor");
  const bool batched = query.dim() == 3;
  const int64_t want = batched ? 3 : 2;
  const char* kind = batched ? "For batched (3-D) `query`" : "For unbatched (2-D) `query`";
  GB_CHECK(key.dim() == want && value.dim() == want, kind, ", expected `key` and `value` to be ", want, "-D but found ",
           key.dim(), "-D and ", value.dim(), "-D tensors respectively");
  GB_CHECK(!key_padding_mask.defined() || key_padding_mask.dim() == want - 1, kind,
           ", expected `key_padding_mask` to be `None` or ", want - 1, "-D but found ", key_padding_mask.dim(),
           "-D tensor instead");
  GB_CHECK(!attn_mask.defined() || attn_mask.dim() == 2 || attn_mask.dim() == 3, kind,
           ", expected `attn_mask` to be `None`, 2-D or 3-D but found ", attn_mask.dim(), "-D tensor instead");

  Tensor q = query, k = key, v = value, kpm = key_padding_mask;
  if (!batched) {
    q = q.unsqueeze(1), k = k.unsqueeze(1), v = v.unsqueeze(1);
    if (kpm.defined()) kpm = kpm.unsqueeze(0);
  } else if (options.batch_first()) {
    q = q.transpose(0, 1), k = k.transpose(0, 1), v = v.transpose(0, 1);
  }
  // q (L, N, E), k and v (S, N, E)
  const int64_t L = q.size(0), N = q.size(1), E = q.size(2), S = k.size(0), H = options.num_heads();
  GB_CHECK(E == options.embed_dim(), "was expecting embedding dimension of ", options.embed_dim(), ", but got ", E);
  GB_CHECK(k.sizes() == v.sizes(), "key shape ", shape_str(k.sizes()), " does not match value shape ",
           shape_str(v.sizes()));
  GB_CHECK(k.size(1) == N && k.size(2) == E, "key shape ", shape_str(k.sizes()), " does not match query shape ",
           shape_str(q.sizes()), " (batch and embedding dims must agree)");

  auto w = in_proj_weight.chunk(3, 0);
  std::vector<Tensor> b = in_proj_bias.defined() ? in_proj_bias.chunk(3, 0) : std::vector<Tensor>(3);
  // (L, N, E) -> (N*H, L, head_dim)
  auto heads = [&](const Tensor& t, int64_t len) { return t.reshape({len, N * H, head_dim}).transpose(0, 1); };
  Tensor qh = heads(gb::linear(q, w[0], b[0]), L);
  Tensor kh = heads(gb::linear(k, w[1], b[1]), S);
  Tensor vh = heads(gb::linear(v, w[2], b[2]), S);

  // One additive mask (N*H or 1, L, S) from attn_mask and key_padding_mask.
  Tensor mask;
  const ScalarType dt = qh.scalar_type();
  if (attn_mask.defined()) {
    if (attn_mask.dim() == 2) {
      GB_CHECK(attn_mask.size(0) == L && attn_mask.size(1) == S, "The shape of the 2D attn_mask is ",
               shape_str(attn_mask.sizes()), ", but should be (", L, ", ", S, ").");
      mask = additive_mask(attn_mask, dt, "attn_mask").unsqueeze(0);
    } else {
      GB_CHECK(attn_mask.size(0) == N * H && attn_mask.size(1) == L && attn_mask.size(2) == S,
               "The shape of the 3D attn_mask is ", shape_str(attn_mask.sizes()), ", but should be (", N * H, ", ", L,
               ", ", S, ").");
      mask = additive_mask(attn_mask, dt, "attn_mask");
    }
  }
  if (kpm.defined()) {
    GB_CHECK(kpm.size(0) == N && kpm.size(1) == S, "expecting key_padding_mask shape of (", N, ", ", S, "), but got ",
             shape_str(kpm.sizes()));
    Tensor padding =
        additive_mask(kpm, dt, "key_padding_mask").view({N, 1, 1, S}).expand({N, H, 1, S}).reshape({N * H, 1, S});
    mask = mask.defined() ? mask + padding : padding;
  }

  // scores (N*H, L, S) = q k^T / sqrt(head_dim) + mask
  Tensor scores = gb::bmm(qh * (1.0 / std::sqrt(double(head_dim))), kh.transpose(1, 2));
  if (mask.defined()) scores = scores + mask;
  Tensor attn = gb::softmax(scores, -1);
  if (is_training() && options.dropout() > 0) attn = gb::dropout(attn, options.dropout(), true);
  // (N*H, L, head_dim) -> (L, N, E) -> out_proj
  Tensor out = gb::bmm(attn, vh).transpose(0, 1).reshape({L, N, E});
  out = gb::linear(out, out_proj->weight, out_proj->bias);

  Tensor weights;
  if (need_weights) {
    weights = attn.view({N, H, L, S});
    if (average_attn_weights) weights = weights.mean({1});
    if (!batched) weights = weights.squeeze(0);
  }
  if (!batched)
    out = out.squeeze(1);
  else if (options.batch_first())
    out = out.transpose(0, 1);
  return {out, weights};
}

}  // namespace gb::nn
