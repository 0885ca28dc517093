"""Interfaces: the CLI, Claude Code and MCP (stdio) now; HTTP later. They parse, call the
service, render."""
