"""Maintenance and course tools: assignments, checking, grading (run as ``python -m tools.X``)."""
