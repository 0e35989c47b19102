// tests/engine/ops/einsum_test.cpp — einsum: values by hand for each form (product, batch, broadcast "...",
// implicit output, diagonal, trace, sum over the ellipsis, three operands), gradients against finite differences,
// and errors that name the subscript or operand at fault.
#include <doctest/doctest.h>

#include "glassbox/glassbox.h"
#include "support/check.h"

TEST_CASE("einsum: each form against the ops it stands for") {
  gb::manual_seed(7);
  gb::Tensor a = gb::randn({3, 4}), b = gb::randn({4, 5}), v = gb::randn({5});
  gbtest::check_close(gb::einsum("ij,jk->ik", {a, b}), gb::mm(a, b), 1e-5, 1e-5);
  gbtest::check_close(gb::einsum("ij,jk", {a, b}), gb::mm(a, b), 1e-5, 1e-5);  // implicit: i, k in order
  gbtest::check_close(gb::einsum("ij,jk->ki", {a, b}), gb::mm(a, b).t(), 1e-5, 1e-5);
  gbtest::check_close(gb::einsum("ij,jk,k->i", {a, b, v}), gb::matmul(gb::mm(a, b), v), 1e-5, 1e-5);
  gb::Tensor q = gb::randn({2, 3, 4, 8}), k = gb::randn({2, 3, 6, 8});
  gbtest::check_close(gb::einsum("bhqd,bhkd->bhqk", {q, k}), gb::matmul(q, k.transpose(-1, -2)), 1e-5, 1e-5);
  gb::Tensor x = gb::randn({2, 1, 3, 4}), y = gb::randn({5, 4, 2});  // "..." broadcasts (2,1) with (5)
  gbtest::check_close(gb::einsum("...ij,...jk->...ik", {x, y}), gb::matmul(x, y), 1e-5, 1e-5);
  gbtest::check_close(gb::einsum("...ij->ij", {x}), x.sum({0, 1}), 1e-5, 1e-5);  // "..." not in the output: summed
  gb::Tensor m = gb::tensor({1.0, 2.0, 3.0, 4.0}).view({2, 2});
  gbtest::check_values(gb::einsum("ii->i", {m}), {1, 4});
  gbtest::check_values(gb::einsum("ii", {m}), {5});
  gbtest::check_values(gb::einsum("ij->", {m}), {10});
  gbtest::check_values(gb::einsum("i,j->ij", {gb::tensor({1.0, 2.0}), gb::tensor({3.0, 4.0})}), {3, 4, 6, 8});
  CHECK(gb::einsum("ij->ij", {m}).data_ptr() == m.data_ptr());  // a view of its input, not a copy
}

TEST_CASE("einsum: gradients against finite differences (float64)") {
  gb::manual_seed(8);
  CHECK(gbtest::gradcheck1([](const gb::variable_list& t) { return gb::einsum("bij,bjk->bik", {t[0], t[1]}); },
                           {gb::randn({2, 3, 4}, gbtest::f64_grad()), gb::randn({2, 4, 2}, gbtest::f64_grad())}));
  CHECK(gbtest::gradcheck1([](const gb::variable_list& t) { return gb::einsum("ii,ij,j->i", {t[0], t[1], t[2]}); },
                           {gb::randn({3, 3}, gbtest::f64_grad()), gb::randn({3, 2}, gbtest::f64_grad()),
                            gb::randn({2}, gbtest::f64_grad())}));
}

TEST_CASE("einsum: errors name the subscript, the operand and the sizes") {
  gb::Tensor a = gb::randn({3, 4}), b = gb::randn({5, 2});
  CHECK_THROWS_WITH(gb::einsum("ij,jk->ik", {a, b}), doctest::Contains("subscript j has size 4 for one operand and 5"));
  CHECK_THROWS_WITH(gb::einsum("ij,jk->ik", {a}), doctest::Contains("names 2, and 1 were given"));
  CHECK_THROWS_WITH(gb::einsum("ijk->i", {a}), doctest::Contains("number of subscripts in the equation (3)"));
  CHECK_THROWS_WITH(gb::einsum("ij->iz", {a}), doctest::Contains("output subscript z does not appear"));
  CHECK_THROWS_WITH(gb::einsum("ij->ii", {a}), doctest::Contains("output subscript i appears more than once"));
  CHECK_THROWS_WITH(gb::einsum("i1->i", {a}), doctest::Contains("invalid subscript '1'"));
  CHECK_THROWS_WITH(gb::einsum("ii->i", {a}), doctest::Contains("subscript i is repeated for an operand but the sizes"));
}
