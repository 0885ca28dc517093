"""Inspection: reading memories and reports without changing anything (listing, explaining,
counting, the cost of providers)."""
