"""Demo engines behind the graded labs' demo cells (stale-rollout GRPO for lab06, synthetic scenes for lab08).

Each module holds the code a lab demo would otherwise paste into the notebook, so that it is tested here.
"""
