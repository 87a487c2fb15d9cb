"""Agentic RL on the tiny world: multi-turn episodes with observation masks, per-turn credit, reward terms.

    from rlprep.agentic.episodes import play, transcript_batch, reward_matrix
    from rlprep.agentic.train import AgenticConfig, train, evaluate
"""
