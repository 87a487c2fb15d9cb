"""Catalogued bugs of sft_step."""

from rlprep.coding.sources import Edit

BUGS = [
    Edit("no_shift", "scores logits[:, t] against the token at t itself",
         {"logits[:, :-1].reshape(-1, logits.shape[-1]), labels[:, 1:].reshape(-1)":
          "logits.reshape(-1, logits.shape[-1]), labels.reshape(-1)"}),
    Edit("prompt_not_masked", "trains on the prompt too",
         {"    labels[positions < prompt_lengths[:, None]] = -100  # no loss on the prompt\n": ""}),
    Edit("padding_not_masked", "trains on the padding",
         {"    labels[attention_mask == 0] = -100  # nor on padding\n": ""}),
    Edit("no_zero_grad", "never clears the gradients: each step adds the previous ones",
         {"    optimizer.zero_grad()\n": ""}),
    Edit("masks_first_response_token", "masks one token too many: the first response token is never learned",
         {"positions < prompt_lengths[:, None]": "positions <= prompt_lengths[:, None]"}),
    Edit("sum_not_mean", "sums the token losses",
         {"ignore_index=-100)  # logits at t": 'ignore_index=-100, reduction="sum")  # logits at t'}),
]
