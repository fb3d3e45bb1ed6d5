"""Snapshots of a session's working tree, and rewinding the files with the conversation.

shadow.py keeps the file contents in a shadow git repository per project
(the system ``git``); records.py holds what a session's ``custom`` entries and
the rewind journal say; confined.py writes inside a folder and nowhere else;
engine.py puts them together into snapshot, diff and rewind.
"""
