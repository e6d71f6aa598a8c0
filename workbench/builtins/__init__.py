"""The built-in tools, by family: files/, terminal/, web/, each with its helpers.

Each module registers its tools when imported; the core finds them by this package's name
(core/tools/discovery.py) and never imports them. They reach the core only through api.py.
"""
