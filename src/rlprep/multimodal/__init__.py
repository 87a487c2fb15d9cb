"""Multimodal toys for notebook 11 and lab07: synthetic shapes data, connectors, a tiny captioning VLM,
a colour-question task with a co-occurrence prior, and multi-image fusion.

Modules: ``shapes`` (data), ``connectors`` (MLP projector, Q-Former, Perceiver resampler, gated cross-attention),
``captioner`` (TinyVLM), ``colour_qa`` (hallucination, evaluation, RL with a verifiable reward), ``fusion``
(multi-image notes). Import the submodule you need; torch is imported by all but ``shapes``.
"""
