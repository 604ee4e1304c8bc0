"""Pooling: retrievers, fusion and depth-k pools."""
