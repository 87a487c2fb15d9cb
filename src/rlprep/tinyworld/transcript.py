"""Turn texts into token ids with a loss mask: what the policy wrote is trained, what it was given is not.

A transcript is a list of ``Turn(text, role)``. ``role="obs"`` is text the policy reads (the prompt, an
environment's reply); ``role="act"`` is text the policy writes, and every action ends with the tokenizer's eos
(the end-of-turn marker, like a chat template's). The same rendering serves single-turn SFT
(``[prompt obs, answer act]``) and multi-turn agentic RL, where observation tokens must be masked out of
the policy loss: the policy did not choose them, so they carry no log-prob to push on.
"""

from __future__ import annotations

from dataclasses import dataclass

from transformers import PreTrainedTokenizerBase

ROLES = ("obs", "act")


@dataclass(frozen=True)
class Turn:
    text: str
    """The turn's text, without any eos (rendering adds it after actions)."""
    role: str
    """"obs" (given to the policy, masked from the loss) or "act" (written by the policy, trained)."""

    def __post_init__(self):
        if self.role not in ROLES:
            raise ValueError(f"Turn.role must be one of {ROLES}, got {self.role!r}")


def render_transcript(tokenizer: PreTrainedTokenizerBase, turns: list[Turn]) -> tuple[list[int], list[int]]:
    """Token ids of a transcript and its action mask.

    Returns ``(input_ids, action_mask)``, two lists of equal length L: ``action_mask[i] = 1`` where token i
    was written by the policy (action text and the eos closing it), 0 for observation tokens. Each turn is
    tokenized on its own, so with a subword tokenizer (``gpt2``) no token straddles a turn boundary.
    """
    ids: list[int] = []
    mask: list[int] = []
    for turn in turns:
        piece = tokenizer(turn.text, add_special_tokens=False)["input_ids"]
        if turn.role == "act":
            piece = piece + [tokenizer.eos_token_id]
        ids += piece
        mask += [1 if turn.role == "act" else 0] * len(piece)
    return ids, mask


def transcript_text(turns: list[Turn], eos_token: str) -> str:
    """The transcript as one string, ``eos_token`` after each action: a prompt for :func:`rlprep.rollout.generate`.

    Tokenizing it gives the ids of :func:`render_transcript` for the character tokenizer (eos is a
    special token, so its text is matched as one id).
    """
    return "".join(turn.text + (eos_token if turn.role == "act" else "") for turn in turns)
