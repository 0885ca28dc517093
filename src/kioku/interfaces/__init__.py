"""Interfaces: the CLI now; hooks, MCP and HTTP later. They parse, call the service, render."""
