"""Runs, pipelines and pools: produce and import runs, rerank stages, depth sweeps, pools and their quality."""
