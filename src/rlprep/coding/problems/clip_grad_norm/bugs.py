"""Catalogued bugs of clip_grad_norm."""

from rlprep.coding.sources import Edit

BUGS = [
    Edit("per_tensor_clipping", "clips each tensor to max_norm on its own: the update's direction changes",
         {"    return [g * factor for g in grads], float(total)":
          "    return [g * torch.clamp(max_norm / (n + 1e-6), max=1.0) for g, n in zip(grads, norms)], float(total)"}),
    Edit("scales_up", "no clamp at 1: small gradients are blown up to max_norm",
         {"torch.clamp(max_norm / (total + 1e-6), max=1.0)": "max_norm / (total + 1e-6)"}),
    Edit("reports_clipped_norm", "returns the norm after clipping",
         {"float(total)": "float(total * factor)"}),
    Edit("sum_of_norms", "adds the per-tensor norms instead of taking their norm",
         {"total = torch.linalg.vector_norm(norms, norm_type)": "total = norms.sum()"}),
    Edit("always_l2", "ignores norm_type",
         {"torch.linalg.vector_norm(g, norm_type)": "torch.linalg.vector_norm(g, 2.0)",
          "torch.linalg.vector_norm(norms, norm_type)": "torch.linalg.vector_norm(norms, 2.0)"}),
    Edit("no_epsilon", "divides by the bare norm",
         {"max_norm / (total + 1e-6)": "max_norm / total"}),
]
