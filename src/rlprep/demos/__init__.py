"""Small, tested engines behind the labs' demo cells and the walkthrough notebooks' evidence cells.

Each module holds code a notebook would otherwise define inline, so that it is tested here, e.g.
``kl_estimators`` (01, G05), ``gae_nstep`` (02), ``ppo_toy`` (03), ``importance`` (04), ``dpo`` (05),
``grpo`` (06 and lab05), ``code_reward`` and ``best_of_n`` (08), ``stale_rollouts`` (lab06),
``image_diff_scenes`` (lab08), and the labs' demo cells: ``reward_model`` (lab02), ``infonce`` (lab07),
``image_diff`` (lab08), each with a ``--record`` entry point (``recorded``) that writes the figures the lab quotes.
"""
