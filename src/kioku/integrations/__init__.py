"""Adapters that let other frameworks use kioku as their memory: each module imports its
framework lazily and is an optional extra (docs/integrations.md)."""
