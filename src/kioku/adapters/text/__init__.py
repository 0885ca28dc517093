"""Text processing shared by adapters (lexical terms for search)."""
