"""Evaluation: the scoring pipeline, validity audits, units and no-answer topics, miss lists, the scoreboard, provenance."""
