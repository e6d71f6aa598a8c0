"""A file change as the core knows it: the patch tool's rule and a write's diff."""
