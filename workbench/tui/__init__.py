"""The Textual front end: the app, its controller, screens and widgets, and `serve`."""
