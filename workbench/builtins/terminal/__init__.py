"""The terminal tool, its output capture, and the reaper that ends all a command started."""
