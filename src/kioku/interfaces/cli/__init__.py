"""The ``kioku`` command line."""
