"""Claude Code: the hooks, their fast paths, the warm recall daemon, the capture inbox,
transcript ingestion and the settings file the hooks are installed in.

Kept empty: a hook imports this package on every prompt, so it must cost nothing.
"""
