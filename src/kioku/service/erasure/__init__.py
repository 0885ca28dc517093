"""Erasure: forgetting a memory, erasing a person, and the backups that may still hold them."""
