"""The MCP face: ``kioku mcp`` serves one owner's memory to agents over stdio.

Kept empty: the command line imports this package's server only when ``kioku mcp`` runs, so
the MCP SDK (the ``server`` extra) is never loaded by other commands or by the hooks.
"""
