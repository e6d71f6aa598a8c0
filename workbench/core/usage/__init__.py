"""What each tool costs on every request, joined with how often it is called.

`sessions` reads the calls of past sessions from our transcripts, `hermes_store` from
Hermes's own session store (read, never written), `report` joins them with each tool's size
in its current state and suggests what to defer or switch off, `change` previews and saves
one suggestion. `hermes-tui tools usage` and the workbench's usage view show the report.
"""
