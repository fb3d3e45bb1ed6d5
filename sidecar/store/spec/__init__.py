"""The session spec's format (shared/seeds/004, section 7) as a second native store.

A spec root holds ``<root>/<ULID>/session.jsonl`` (append-only records) and
``metadata.json`` per session. In memory a spec session is the same tree of
pi-shaped entries as any other (a single chain); ``codec`` translates records
to entries and back, ``writer`` appends records and rewrites the metadata,
``layout`` is the only place that turns a session id into a path.
"""
