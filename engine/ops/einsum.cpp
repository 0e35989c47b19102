// engine/ops/einsum.cpp — einsum, composed of differentiable view, reduction and bmm ops (its backward is theirs).
//
// The equation names each operand's dims by letters ("bhqd,bhkd->bhqk"), "..." standing for broadcast dims. Each
// operand first loses its repeated letters (a diagonal, an as_strided view) and the letters no one else needs
// (summed); then the operands are contracted left to right, two at a time, as one bmm each: the letters both keep
// are the batch, the letters only one has are its rows or columns, the letters both have and nobody needs later
// are the sum. What is left is summed down to the output's letters and permuted into their order. No operand is
// ever multiplied out over letters it does not have (the naive broadcast-multiply-sum would, with an attention's
// b*h*q*k*d elements).
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "core/make.h"
#include "core/op_scope.h"
#include "glassbox/ops/linalg.h"
#include "glassbox/ops/reduce.h"
#include "glassbox/ops/shape.h"

namespace gb {
namespace {

constexpr int kLetters = 52;  // a-z, A-Z; the ellipsis's dims are labels kLetters, kLetters + 1, ...

struct Term {
  std::vector<int> labels;  // one per dim, letters as 0..51 and the ellipsis's dims as kLetters + e
};

int letter(char c) { return c >= 'a' && c <= 'z' ? c - 'a' : c >= 'A' && c <= 'Z' ? 26 + (c - 'A') : -1; }
char letter_char(int l) { return l < 26 ? char('a' + l) : char('A' + l - 26); }

// The letters of one term and where its ellipsis is (-1: none), checked.
std::vector<int> parse_term(std::string_view s, int& ellipsis_at, std::string_view eq) {
  std::vector<int> out;
  ellipsis_at = -1;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == ' ') continue;
    if (s[i] == '.') {
      GB_CHECK(s.substr(i, 3) == "..." && ellipsis_at < 0, "einsum(): invalid ellipsis in \"", eq,
               "\": each operand and the output may have one \"...\" (three dots)");
      ellipsis_at = int(out.size());
      i += 2;
      continue;
    }
    const int l = letter(s[i]);
    GB_CHECK(l >= 0, "einsum(): invalid subscript '", s[i], "' in \"", eq,
             "\": subscripts must be letters in [a-zA-Z] (or \"...\")");
    out.push_back(l);
  }
  return out;
}

struct Operand {
  Tensor t;
  std::vector<int> labels;
};

// t without repeated labels: each repeated pair becomes its diagonal (the first occurrence's place).
Operand take_diagonals(Operand o) {
  for (size_t i = 0; i < o.labels.size(); ++i)
    for (size_t j = i + 1; j < o.labels.size(); ++j) {
      if (o.labels[j] != o.labels[i]) continue;
      GB_CHECK(o.t.size(int64_t(i)) == o.t.size(int64_t(j)), "einsum(): subscript ", letter_char(o.labels[i]),
               " is repeated for an operand but the sizes don't match, ", o.t.size(int64_t(i)), " != ",
               o.t.size(int64_t(j)));
      std::vector<int64_t> sizes = o.t.sizes().vec(), strides = o.t.strides().vec();
      strides[i] += strides[j];
      sizes.erase(sizes.begin() + int64_t(j));
      strides.erase(strides.begin() + int64_t(j));
      o.t = o.t.as_strided(sizes, strides, o.t.storage_offset());
      o.labels.erase(o.labels.begin() + int64_t(j));
      --j;
    }
  return o;
}

// o summed over the labels `keep` says nobody needs.
Operand sum_unneeded(Operand o, const std::vector<bool>& keep) {
  std::vector<int64_t> dims;
  std::vector<int> left;
  for (size_t i = 0; i < o.labels.size(); ++i) {
    if (keep[size_t(o.labels[i])])
      left.push_back(o.labels[i]);
    else
      dims.push_back(int64_t(i));
  }
  if (!dims.empty()) {
    o.t = o.t.sum(dims);
    o.labels = left;
  }
  return o;
}

int64_t index_of(const std::vector<int>& v, int l) { return int64_t(std::find(v.begin(), v.end(), l) - v.begin()); }

// a and b (each without repeated labels) contracted into one operand holding the labels `keep` marks.
Operand contract(Operand a, Operand b, const std::vector<bool>& keep) {
  // First each side sums what neither the other side nor anyone after needs (a cheap reduction before the product).
  std::vector<bool> keep_a = keep, keep_b = keep;
  for (int l : b.labels) keep_a[size_t(l)] = true;
  for (int l : a.labels) keep_b[size_t(l)] = true;
  a = sum_unneeded(std::move(a), keep_a);
  b = sum_unneeded(std::move(b), keep_b);
  std::vector<bool> in_b(kLetters * 2, false);
  for (int l : b.labels) in_b[size_t(l)] = true;
  std::vector<int> batch, left, sum, right;
  for (int l : a.labels) (in_b[size_t(l)] ? (keep[size_t(l)] ? batch : sum) : left).push_back(l);
  for (int l : b.labels)
    if (index_of(a.labels, l) == int64_t(a.labels.size())) right.push_back(l);
  // sizes: a label both have must agree, or be 1 on one side for the ellipsis's dims (broadcast)
  auto size_of = [](const Operand& o, int l) { return o.t.size(index_of(o.labels, l)); };
  std::vector<int64_t> a_expand = a.t.sizes().vec(), b_expand = b.t.sizes().vec();
  for (const auto* group : {&batch, &sum})
    for (int l : *group) {
      const int64_t sa = size_of(a, l), sb = size_of(b, l);
      if (sa == sb) continue;
      GB_CHECK(l >= kLetters && (sa == 1 || sb == 1), "einsum(): operands do not broadcast with remapped shapes "
               "(original): subscript ", l < kLetters ? std::string(1, letter_char(l)) : std::string("..."),
               " has size ", sa, " for one operand and ", sb, " for another");
      if (sa == 1)
        a_expand[size_t(index_of(a.labels, l))] = sb;
      else
        b_expand[size_t(index_of(b.labels, l))] = sa;
    }
  a.t = a.t.expand(a_expand);
  b.t = b.t.expand(b_expand);
  auto product = [&](const Operand& o, const std::vector<int>& ls) {
    int64_t p = 1;
    for (int l : ls) p *= size_of(o, l);
    return p;
  };
  auto order = [&](const Operand& o, std::initializer_list<const std::vector<int>*> groups) {
    std::vector<int64_t> perm;
    for (const auto* g : groups)
      for (int l : *g) perm.push_back(index_of(o.labels, l));
    return perm;
  };
  const int64_t B = product(a, batch), L = product(a, left), S = product(a, sum), R = product(b, right);
  Tensor ta = a.t.permute(order(a, {&batch, &left, &sum})).reshape({B, L, S});
  Tensor tb = b.t.permute(order(b, {&batch, &sum, &right})).reshape({B, S, R});
  std::vector<int64_t> sizes;
  std::vector<int> labels;
  for (int l : batch) sizes.push_back(size_of(a, l)), labels.push_back(l);
  for (int l : left) sizes.push_back(size_of(a, l)), labels.push_back(l);
  for (int l : right) sizes.push_back(size_of(b, l)), labels.push_back(l);
  return {gb::bmm(ta, tb).reshape(sizes), labels};
}

}  // namespace

Tensor einsum(std::string_view equation, TensorList tensors, std::optional<IntArrayRef> path) {
  const char* op = "einsum";
  GB_CHECK(!tensors.empty(), "einsum(): must provide at least one operand");
  for (const Tensor& t : tensors) detail::check_defined(t, op);
  detail::OpScope op_scope(op, {tensors[0]});
  (void)path;  // the contraction order is left to right (libtorch's default without opt_einsum)
  const size_t arrow = equation.find("->");
  const std::string_view lhs = equation.substr(0, arrow);
  std::vector<std::string_view> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  GB_CHECK(terms.size() == tensors.size(), "einsum(): more operands were provided than specified in the equation"
           " or fewer: \"", equation, "\" names ", terms.size(), ", and ", tensors.size(), " were given");

  // Each operand's labels: its letters, its ellipsis's dims right-aligned among kLetters + 0 .. E-1.
  std::vector<Operand> ops;
  int64_t ell = 0;
  std::vector<std::vector<int>> letters(terms.size());
  std::vector<int> ell_at(terms.size());
  for (size_t k = 0; k < terms.size(); ++k) {
    letters[k] = parse_term(terms[k], ell_at[k], equation);
    const int64_t n = int64_t(letters[k].size()), d = tensors[k].dim();
    GB_CHECK(ell_at[k] >= 0 ? d >= n : d == n, "einsum(): the number of subscripts in the equation (", n,
             ") does not match the number of dimensions (", d, ") for operand ", k,
             ell_at[k] >= 0 ? " (with an ellipsis, at least)" : " and no ellipsis was given");
    if (ell_at[k] >= 0) ell = std::max(ell, d - n);
  }
  std::vector<int> count(size_t(kLetters * 2), 0);
  for (size_t k = 0; k < terms.size(); ++k) {
    std::vector<int> labels;
    const int64_t e = tensors[k].dim() - int64_t(letters[k].size());
    for (int i = 0; i <= int(letters[k].size()); ++i) {
      if (i == ell_at[k])
        for (int64_t j = 0; j < e; ++j) labels.push_back(int(kLetters + ell - e + j));
      if (i < int(letters[k].size())) labels.push_back(letters[k][size_t(i)]);
    }
    for (int l : labels) ++count[size_t(l)];
    ops.push_back({tensors[k], labels});
  }
  // The output: given after "->", or the ellipsis's dims then the letters used once, in alphabetical order.
  std::vector<int> out;
  if (arrow != std::string_view::npos) {
    int out_ell = -1;
    const std::vector<int> ls = parse_term(equation.substr(arrow + 2), out_ell, equation);
    for (int i = 0; i <= int(ls.size()); ++i) {
      if (i == out_ell)
        for (int64_t j = 0; j < ell; ++j) out.push_back(int(kLetters + j));
      if (i < int(ls.size())) {
        const int l = ls[size_t(i)];
        GB_CHECK(count[size_t(l)] > 0, "einsum(): output subscript ", letter_char(l),
                 " does not appear in the equation for any input operand");
        GB_CHECK(index_of(out, l) == int64_t(out.size()), "einsum(): output subscript ", letter_char(l),
                 " appears more than once in the output");
        out.push_back(l);
      }
    }
    // (no "..." in the output: the broadcast dims are summed, as libtorch)
  } else {
    for (int64_t j = 0; j < ell; ++j) out.push_back(int(kLetters + j));
    for (int l = 0; l < kLetters; ++l)
      if (count[size_t(l)] == 1) out.push_back(l);
  }

  std::vector<bool> in_out(size_t(kLetters * 2), false);
  for (int l : out) in_out[size_t(l)] = true;
  for (Operand& o : ops) o = take_diagonals(std::move(o));
  // Left to right: after operand k, a label is kept if the output or an operand after k has it.
  auto needed_after = [&](size_t k) {
    std::vector<bool> keep = in_out;
    for (size_t j = k + 1; j < ops.size(); ++j)
      for (int l : ops[j].labels) keep[size_t(l)] = true;
    return keep;
  };
  Operand acc = sum_unneeded(ops[0], needed_after(0));
  for (size_t k = 1; k < ops.size(); ++k) acc = contract(std::move(acc), std::move(ops[k]), needed_after(k));
  acc = sum_unneeded(std::move(acc), in_out);
  // The ellipsis's dims of the output that no operand had (all had fewer) are size 1.
  for (int l : out)
    if (index_of(acc.labels, l) == int64_t(acc.labels.size())) {
      acc.t = acc.t.unsqueeze(acc.t.dim());
      acc.labels.push_back(l);
    }
  std::vector<int64_t> perm;
  for (int l : out) perm.push_back(index_of(acc.labels, l));
  Tensor result = acc.t.permute(perm);  // a view even when nothing moves: never the input itself, as libtorch
  op_scope.set_output(result);
  return result;
}

}  // namespace gb
