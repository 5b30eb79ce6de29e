"""Grading: labeled expectations, a three-stage checker, metrics that pick a model."""
