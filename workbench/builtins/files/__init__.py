"""Built-in file tools: read_file, write_file, patch, search_files, here or on a backend."""
