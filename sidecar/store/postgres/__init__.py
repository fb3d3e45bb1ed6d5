"""PostgreSQL as a second store: sessions for agents on many hosts (issue 12).

``db`` connects and bounds every call in time, ``schema`` versions the tables,
``rows`` maps a session file onto rows and back, ``writer`` holds a session
under a lease and appends with a fence, ``listing`` answers session/list in
SQL, ``transfer`` imports a file root and exports it back byte for byte.
"""
