"""Calls saved as test cases (YAML files), and replaying them through the agent's call path."""
