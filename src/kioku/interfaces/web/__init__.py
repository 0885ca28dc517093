"""The web UI of ``kioku serve``: server-rendered pages, shipped assets, no CDN."""
