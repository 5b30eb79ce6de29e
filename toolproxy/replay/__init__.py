"""Replay: re-send captured sessions to candidate models and grade them the same way."""
