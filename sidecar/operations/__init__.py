"""The protocol's operations, by concept, as ``sidecar/service/`` calls them.

``sidecar/service/`` maps each method's params to one of these (or to the store);
the modules here build results from what the store and the context, compaction
and history engines give, and know nothing of where sessions live.
"""
