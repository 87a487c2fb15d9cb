"""A character-level tokenizer built locally (no download): one token per printable ASCII character.

The vocabulary is ``<pad>``, ``<eos>``, ``<unk>`` (ids 0, 1, 2), then the newline and the 95 printable ASCII
characters 32..126. It is a real ``PreTrainedTokenizerFast``: it saves with ``save_pretrained``, loads back
through ``AutoTokenizer.from_pretrained``, and TRL's trainers accept it. It pads on the left, the side
generation needs.
"""

from __future__ import annotations

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

PAD, EOS, UNK = "<pad>", "<eos>", "<unk>"
SPECIAL_TOKENS = (PAD, EOS, UNK)
CHARACTERS = "\n" + "".join(chr(code) for code in range(32, 127))
"""Every character the tiny world writes: newline plus printable ASCII."""


def build_tokenizer() -> PreTrainedTokenizerFast:
    """The character-level tokenizer: vocab of 3 special tokens + 96 characters = 99 ids.

    ``bos_token`` is ``<eos>`` (as in GPT-2, where one token marks both ends); no special token is added
    automatically, so ``tokenizer(text)`` gives exactly one id per character.
    """
    vocab = {token: i for i, token in enumerate(SPECIAL_TOKENS)}
    for char in CHARACTERS:
        vocab[char] = len(vocab)
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token=UNK))
    # "[\s\S]" so the newline is a token too (a plain "." skips it).
    core.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    core.decoder = decoders.Fuse()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core,
        pad_token=PAD,
        eos_token=EOS,
        bos_token=EOS,
        unk_token=UNK,
        padding_side="left",
        clean_up_tokenization_spaces=False,
        model_max_length=1024,
    )
    return tokenizer
