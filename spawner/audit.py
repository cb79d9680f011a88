"""The hub's audit stream (core.audit): audit-hub.jsonl in the folder the config names.

spawner.audit.configure(state / "audit")   # in jupyterhub_config.py
"""

from __future__ import annotations

from core.audit import AuditStream

_stream = AuditStream("hub")
configure = _stream.configure
audit = _stream.write
