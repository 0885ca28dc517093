"""Ports: the Protocols the service talks to. Adapters implement them."""
