<<<<<<< HEAD
"""Demo engines behind the graded labs' demo cells (stale-rollout GRPO for lab06, synthetic scenes for lab08).

Each module holds the code a lab demo would otherwise paste into the notebook, so that it is tested here.
=======
"""Small, tested helpers behind the walkthrough notebooks' evidence cells (toys with a known truth).

Each module serves one notebook topic; the notebooks import them instead of defining code inline:
``kl_estimators`` (01, G05), ``gae_nstep`` (02, W04/G08), ``ppo_toy`` (03, W05/W06/G04/G13),
``importance`` (04, W07).
>>>>>>> nb-core-a
"""
