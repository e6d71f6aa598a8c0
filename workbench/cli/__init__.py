"""The command-line front end: `hermes-tui`'s commands. No Textual here."""
