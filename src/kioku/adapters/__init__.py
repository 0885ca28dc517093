"""Adapters: implementations of the ports (stores, clocks, later embedders and analyzers)."""
