"""The tool table and what it offers: registry, toolsets, discovery, arguments, the call path."""
