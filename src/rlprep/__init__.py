"""rlprep: an interactive course for LLM reinforcement-learning interviews."""

__version__ = "0.1.0"
