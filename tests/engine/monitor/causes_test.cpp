// Tests engine/monitor/causes.cpp: the alarms of one fault are linked, root first, each link with its evidence
// (the chain: an outsized update, the ReLU after that layer dying, the layers before it vanishing; a
// schedule bug: outsized updates, the loss, exploding gradients, non-finite values), and unrelated alarms stay
// separate. Every cause is an earlier row.
#include <doctest/doctest.h>

#include "engine/monitor/monitor_test_util.h"

using gb::trace::AnomalyKind;

namespace {
// Follows cause_id to the root.
const AnomalyRow& root_of(const std::vector<AnomalyRow>& rows, const AnomalyRow& r) {
  const AnomalyRow* at = &r;
  for (int guard = 0; at->cause_id >= 0 && guard < 1000; ++guard) {
    const AnomalyRow* up = by_id(rows, at->cause_id);
    REQUIRE(up);
    at = up;
  }
  return *at;
}
}  // namespace

TEST_CASE("an outsized update -> the ReLU after that layer dies -> the layers before it stop getting gradient") {
  TempDir tmp;
  const auto rows = read_anomalies(run_fault(tmp, "lr_group"));
  REQUIRE(!rows.empty());
  for (const auto& r : rows) {
    CAPTURE(r.message);
    if (r.cause_id >= 0) CHECK(r.cause_id < r.id);  // causes come first
    CHECK((r.cause_id >= 0) == !r.cause.empty());
  }
  const AnomalyRow& update = rows[0];
  REQUIRE(update.kind == static_cast<int>(AnomalyKind::update_ratio));
  const auto relu = of_kind(rows, AnomalyKind::dead_relu);
  REQUIRE(relu.size() == 1);
  CHECK(relu[0].cause_id == update.id);
  CHECK(relu[0].cause.find("fc2 feeds this ReLU") == 0);
  CHECK(relu[0].cause.find("one update of fc2.weight was") != std::string::npos);
  // every vanishing gradient and every later update_ratio row has the outsized update at its root
  for (const auto& r : rows) {
    CAPTURE(r.message);
    if (r.kind == static_cast<int>(AnomalyKind::vanishing_norm) || r.kind == static_cast<int>(AnomalyKind::update_ratio))
      CHECK(root_of(rows, r).id == update.id);
  }
}

TEST_CASE("a schedule bug in a CNN: one step's outsized updates share a root; loss, gradients, NaN follow from it") {
  TempDir tmp;
  const auto rows = read_anomalies(run_fault(tmp, "cnn_lr_jump"));
  const auto updates = of_kind(rows, AnomalyKind::update_ratio);
  REQUIRE(updates.size() >= 3);
  const AnomalyRow& root = updates[0];
  CHECK(root.step == 30);
  CHECK(root.cause_id == -1);
  CHECK(root.message.find("(lr 20), the optimizer's only group") != std::string::npos);
  for (const auto& u : updates)
    if (u.step == 30 && u.id != root.id) {
      CHECK(root_of(rows, u).id == root.id);
      CHECK(u.cause.find("the same optimizer step and parameter group") == 0);
    }
  const auto spikes = of_kind(rows, AnomalyKind::loss_spike);
  REQUIRE(!spikes.empty());
  CHECK(spikes[0].step == 31);
  CHECK(root_of(rows, spikes[0]).id == root.id);
  for (const auto& e : of_kind(rows, AnomalyKind::exploding_norm)) {
    CHECK(e.step == 31);
    CHECK(e.cause_id == spikes[0].id);  // the loss that large made every gradient large
    CHECK(root_of(rows, e).id == root.id);
  }
  const auto nonfinite = of_kind(rows, AnomalyKind::nonfinite_forward);
  REQUIRE(!nonfinite.empty());
  CHECK(nonfinite[0].step > 31);
  CHECK(root_of(rows, nonfinite[0]).id == root.id);
  for (size_t i = 1; i < nonfinite.size(); ++i) {  // each later step: the previous one's NaN went into the update
    CHECK(nonfinite[i].cause_id == nonfinite[i - 1].id);
    CHECK(nonfinite[i].cause.find("its optimizer step applied those gradients") != std::string::npos);
  }
}

TEST_CASE("unrelated alarms stay separate: a mislabelled batch is a root; its gradients link to it, nothing else") {
  TempDir tmp;
  const auto rows = read_anomalies(run_fault(tmp, "loss_spike"));
  const auto spikes = of_kind(rows, AnomalyKind::loss_spike);
  REQUIRE(spikes.size() == 1);
  CHECK(spikes[0].cause_id == -1);
  for (const auto& e : of_kind(rows, AnomalyKind::exploding_norm)) {
    CHECK(e.cause_id == spikes[0].id);
    CHECK(e.cause.find("the same step's loss spiked") == 0);
  }
  // two unrelated faults in one program are two roots
  const auto detached = read_anomalies(run_fault(tmp, "frozen_and_skipped"));
  REQUIRE(detached.size() == 2);
  CHECK(detached[0].cause_id == -1);
  CHECK(detached[1].cause_id == -1);
}
