"""Judging: assessors' sessions and saves, judging order, rubrics, duplicate groups, model assessors, judgments in and out, simulation."""
