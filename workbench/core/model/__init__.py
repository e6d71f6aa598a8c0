"""The model the agent talks to: settings, providers, the bundled local model, token counts."""
