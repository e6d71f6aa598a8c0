"""Built-in web tools: web_search, web_extract."""
