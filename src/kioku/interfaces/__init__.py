"""Interfaces: the CLI and Claude Code now; MCP and HTTP later. They parse, call the service,
render."""
