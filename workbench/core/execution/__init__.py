"""Running a batch of tool calls: planning, the approval gate, timeouts, result budgets."""
