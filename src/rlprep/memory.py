"""Training-memory arithmetic for LLMs (G11): model states per ZeRO stage, plus an activation estimate.

Model states follow ZeRO (Rajbhandari et al. 2019, arXiv 1910.02054, Sec. 3.1 and Fig. 1): mixed-precision Adam
keeps 2Ψ bytes of fp16/bf16 weights, 2Ψ of gradients and K·Ψ = 12Ψ of fp32 optimizer state (master weights,
momentum, variance), i.e. 16 bytes per parameter. ZeRO partitions them over N data-parallel GPUs:
stage 1 → 4Ψ + 12Ψ/N, stage 2 → 2Ψ + 14Ψ/N, stage 3 → 16Ψ/N. The paper's example: 7.5B params → 120 GB.

The activation estimate follows Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large Transformer
Models", arXiv 2205.05198, Eq. 1): per layer s·b·h·(34 + 5·a·s/h) bytes in 16-bit without recomputation, and
2·s·b·h bytes per layer (only the layer inputs) with full activation checkpointing.
"""

from __future__ import annotations

from dataclasses import dataclass

GB = 1e9
"""Decimal gigabytes, as the ZeRO paper counts (7.5B × 16 B = 120 GB)."""

BYTES = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1}


@dataclass(frozen=True)
class MemoryBreakdown:
    """Bytes per GPU, by kind."""

    weights: float
    grads: float
    optimizer: float
    activations: float

    @property
    def model_states(self) -> float:
        return self.weights + self.grads + self.optimizer

    @property
    def total(self) -> float:
        return self.model_states + self.activations

    def as_gb(self) -> dict[str, float]:
        return {"weights": self.weights / GB, "grads": self.grads / GB, "optimizer": self.optimizer / GB,
                "activations": self.activations / GB, "total": self.total / GB}


def optimizer_bytes_per_param(optimizer: str = "adam", master_weights: bool = True) -> int:
    """fp32 optimizer state per parameter: Adam keeps momentum and variance (8 B), plus a 4 B fp32 master copy
    under mixed precision; SGD with momentum keeps 4 B (+4 B master); plain SGD keeps only the master copy."""
    states = {"adam": 8, "adamw": 8, "sgd_momentum": 4, "sgd": 0}
    if optimizer not in states:
        raise ValueError(f"unknown optimizer {optimizer!r}; use one of {sorted(states)}")
    return states[optimizer] + (4 if master_weights else 0)


def model_state_bytes(n_params: float, n_gpus: int = 1, zero_stage: int = 0, weight_dtype: str = "bf16",
                      optimizer: str = "adam") -> MemoryBreakdown:
    """Weights, gradients and optimizer state per GPU under ZeRO stage 0-3 (arXiv 1910.02054, Fig. 1).

    Mixed precision (bf16/fp16 weights) keeps an fp32 master copy in the optimizer state; fp32 training does not.
    """
    if zero_stage not in (0, 1, 2, 3):
        raise ValueError(f"zero_stage must be 0, 1, 2 or 3, got {zero_stage}")
    if n_gpus < 1:
        raise ValueError(f"n_gpus must be >= 1, got {n_gpus}")
    if weight_dtype not in BYTES:
        raise ValueError(f"unknown dtype {weight_dtype!r}; use one of {sorted(BYTES)}")
    w = BYTES[weight_dtype] * n_params
    g = BYTES[weight_dtype] * n_params
    o = optimizer_bytes_per_param(optimizer, master_weights=weight_dtype != "fp32") * n_params
    o = o / n_gpus if zero_stage >= 1 else o
    g = g / n_gpus if zero_stage >= 2 else g
    w = w / n_gpus if zero_stage >= 3 else w
    return MemoryBreakdown(weights=w, grads=g, optimizer=o, activations=0.0)


def activation_bytes(seq_len: int, micro_batch: int, hidden: int, n_layers: int, n_heads: int,
                     checkpointing: bool = False) -> float:
    """16-bit activation memory of a GPT-style model (arXiv 2205.05198, Eq. 1; no tensor/sequence parallelism)."""
    s, b, h, a = seq_len, micro_batch, hidden, n_heads
    per_layer = 2 * s * b * h if checkpointing else s * b * h * (34 + 5 * a * s / h)
    return per_layer * n_layers


def training_memory(n_params: float, n_gpus: int = 1, zero_stage: int = 0, weight_dtype: str = "bf16",
                    optimizer: str = "adam", seq_len: int = 0, micro_batch: int = 0, hidden: int = 0,
                    n_layers: int = 0, n_heads: int = 1, checkpointing: bool = False) -> MemoryBreakdown:
    """Model states per GPU plus activations (set seq_len/micro_batch/hidden/n_layers to include them)."""
    states = model_state_bytes(n_params, n_gpus, zero_stage, weight_dtype, optimizer)
    acts = activation_bytes(seq_len, micro_batch, hidden, n_layers, n_heads, checkpointing) if seq_len else 0.0
    return MemoryBreakdown(states.weights, states.grads, states.optimizer, acts)
