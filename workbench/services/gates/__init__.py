"""Release gates: a paired comparison of a candidate against a baseline turned into a verdict and an exit code."""
