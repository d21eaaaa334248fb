// SPDX-License-Identifier: Apache-2.0
// A person at the approval channel, as a test: answers every question with one fixed outcome and
// keeps each question it was asked, in order.
#pragma once

#include <vector>

#include "dsh/sandbox/escalation.h"

namespace dsh::testing {

class FakeApprover final : public sandbox::Approver {
 public:
  explicit FakeApprover(sandbox::EscalationOutcome outcome) : outcome_(outcome) {}
  sandbox::EscalationOutcome request(const sandbox::ApprovalRequest& request) override {
    requests.push_back(request);
    return outcome_;
  }
  std::vector<sandbox::ApprovalRequest> requests;

 private:
  sandbox::EscalationOutcome outcome_;
};

}  // namespace dsh::testing
