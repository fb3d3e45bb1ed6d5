"""The protocol's operations, by concept, as ``service.py`` calls them.

``service.py`` maps each method's params to one of these (or to the store);
the modules here build results from what the store and the context, compaction
and history engines give, and know nothing of where sessions live.
"""
