"""The agent: its loop, its session, its own tools, sub-agents, transcripts and context."""
