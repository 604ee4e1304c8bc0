"""Vector search and filters: approximate indexes, embedding caches, topic filters over document metadata."""
