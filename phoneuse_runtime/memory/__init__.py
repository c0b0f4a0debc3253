"""The phone's memory: a graph of people, messages, calls, events, places, apps and the agent's
own notes, in SQLite, fed by the runtime and queried with MEMORY and CONTACTS.

- schema.py: the file and its tables; store.py: the graph's reads and writes;
- resolve.py: the keys that make one person of a contact, an SMS sender and an attendee;
- ../privacy.py (shared with the gateway): the one-time codes and passwords masked before a
  message's text is stored;
- search.py: MEMORY's filters and ranking; ingest.py: what feeds it;
- component.py: the app's component; migrate.py: the JSON store of earlier versions;
- transfer.py: `phoneuse-runtime memory export | import | stats`.
"""

from __future__ import annotations

from phoneuse_runtime.memory.component import Memory, Ranked
from phoneuse_runtime.memory.search import Filters
from phoneuse_runtime.memory.store import Edge, Node, check_bounds

__all__ = ["Edge", "Filters", "Memory", "Node", "Ranked", "check_bounds"]
