"""Context: the working memory of a conversation, kept within its token budget."""
