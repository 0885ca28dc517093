"""The MCP face: ``kioku mcp`` serves one owner's memory over stdio, and ``kioku serve``
serves every key's owner over streamable HTTP at ``/mcp`` (``interfaces/http/mcp_mount.py``).

Kept empty: the command line imports this package's server only when one of those commands
runs, so the MCP SDK (the ``server`` extra) is never loaded by other commands or by the hooks.
"""
