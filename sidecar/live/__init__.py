"""Live sessions: subscriptions with cursors and a bounded backlog, and who controls a session.

Transport-free: the bus takes events from the service (or from any store that
learns of changes, e.g. PostgreSQL LISTEN/NOTIFY) and hands encoded
notification bodies to subscribers; the rpc layer supplies the subscribers.
"""

from .bus import Cursor, EventBus, Subscriber
from .roles import Roles

__all__ = ["Cursor", "EventBus", "Roles", "Subscriber"]
