"""Memory kinds beside the episode: writing them on purpose and keeping them up to date."""
