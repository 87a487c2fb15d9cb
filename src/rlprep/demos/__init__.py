"""Small, tested engines behind the labs' demo cells and the walkthrough notebooks' evidence cells.

Each module holds code a notebook would otherwise define inline, so that it is tested here, e.g.
``kl_estimators`` (01, G05), ``gae_nstep`` (02), ``ppo_toy`` (03), ``importance`` (04), ``dpo`` (05),
``grpo`` (06 and lab05), ``code_reward`` and ``best_of_n`` (08), ``image_diff_scenes`` (lab08), and the labs' demo
cells: ``gae_chain`` and ``ppo_lambda`` (lab01), ``reward_model`` (lab02), ``ppo_rlhf`` (lab03), ``dpo_beta_sweep``
(lab04), ``grpo_arithmetic`` (lab05), ``importance`` and ``stale_rollouts`` (lab06), ``infonce`` (lab07),
``image_diff`` (lab08), ``dr_grpo_weights`` (lab09); ``recorded`` and ``lab_runs`` hold what their ``--record`` entry points and profile notes share.
"""
