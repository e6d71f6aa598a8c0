"""Files the app writes and reads: atomic writes, private modes, bounded YAML."""
