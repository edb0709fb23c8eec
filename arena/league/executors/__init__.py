"""Where league games are played: the executor contract (base.py) and its implementations."""
