"""The tiny world's tasks: arithmetic (verifiable reward), reviews (preferences, gold scorer), multiturn (an env)."""
