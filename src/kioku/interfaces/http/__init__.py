"""The HTTP face of kioku: a versioned JSON API (``/v1``), MCP over streamable HTTP
(``/mcp``) and the web UI (``/``), served by ``kioku serve``. Needs ``kioku[server]``."""
