"""Remembering: new memories from their fields or from a conversation turn, imports, the
source ids already known, and protection."""
