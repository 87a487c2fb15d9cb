"""Catalogued bugs of swiglu_mlp."""

from rlprep.coding.sources import Edit

BUGS = [
    Edit("relu_gate", "ReLU instead of SiLU (ReGLU)",
         {"F.silu(x @ w_gate.T)": "F.relu(x @ w_gate.T)"}),
    Edit("sigmoid_gate", "sigmoid instead of SiLU (the original GLU)",
         {"F.silu(x @ w_gate.T)": "torch.sigmoid(x @ w_gate.T)"}),
    Edit("silu_on_up", "puts SiLU on the up projection",
         {"gate = F.silu(x @ w_gate.T)": "gate = x @ w_gate.T", "up = x @ w_up.T": "up = F.silu(x @ w_up.T)"}),
    Edit("silu_after_product", "applies SiLU to the product",
         {"return (gate * up) @ w_down.T": "return F.silu((x @ w_gate.T) * up) @ w_down.T"}),
    Edit("adds_instead_of_gating", "adds the two projections",
         {"(gate * up) @ w_down.T": "(gate + up) @ w_down.T"}),
    Edit("down_not_transposed", "multiplies by w_down without the transpose (shaped right only when D == F)",
         {"(gate * up) @ w_down.T": "(gate * up) @ w_down"}),
]
