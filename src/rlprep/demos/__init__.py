"""Small, tested engines behind the labs' demo cells and the walkthrough notebooks' evidence cells.

Each module holds code a notebook would otherwise define inline, so that it is tested here, e.g.
``kl_estimators`` (01, G05), ``gae_nstep`` (02), ``ppo_toy`` (03), ``importance`` (04), ``dpo`` (05),
``grpo`` (06 and lab05), ``code_reward`` and ``best_of_n`` (08), ``ppo_rlhf`` (lab03), ``dpo_beta_sweep``
(lab04), ``grpo_arithmetic`` (lab05), ``importance`` and ``stale_rollouts`` (lab06), ``lab_runs`` (what every lab
demo that trains prints and records),
``image_diff_scenes`` (lab08).
"""
