"""Running a batch of tool calls: planning, asking for approval (what asks is decided in
policy/), timeouts, result budgets."""
