"""arena: a bot arena and tournament runner for four abstract strategy games."""

__version__ = "0.1.0"
