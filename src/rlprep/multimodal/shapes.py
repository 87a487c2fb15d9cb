"""Synthetic image-caption data: coloured shapes rendered with numpy, captions as text and token ids.

Used by notebook 11 (connectors, hallucination, multi-image fusion) and lab07's dual encoder. One image holds one
shape described by four attributes (shape, colour, size, position); its caption is
``"a {size} {colour} {shape} at the {position}"``. Images are float32 ``[N, 3, H, W]`` in [0, 1] on a mid-grey
background. Knobs make the visual evidence weaker (``contrast``, ``noise_std``) and the attributes correlated
(``colour_given_shape``: a co-occurrence prior, as in real captions where some pairings are far more common).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SHAPES: tuple[str, ...] = ("circle", "square", "triangle")
COLOURS: dict[str, tuple[float, float, float]] = {
    "red": (0.90, 0.10, 0.10), "green": (0.10, 0.75, 0.20), "blue": (0.15, 0.30, 0.95), "yellow": (0.95, 0.85, 0.10),
}
COLOUR_NAMES: tuple[str, ...] = tuple(COLOURS)
SIZES: tuple[str, ...] = ("small", "large")
POSITIONS: tuple[str, ...] = ("top left", "top right", "bottom left", "bottom right")
ATTRIBUTES: tuple[str, ...] = ("shape", "colour", "size", "position")
"""Column order of ``ShapeBatch.attributes``."""
N_VALUES: tuple[int, ...] = (len(SHAPES), len(COLOUR_NAMES), len(SIZES), len(POSITIONS))
BACKGROUND = 0.5
"""Grey level of the background (every channel)."""

SPECIALS: tuple[str, ...] = ("<pad>", "<bos>", "<eos>", "<unk>")
PAD_ID, BOS_ID, EOS_ID = 0, 1, 2
_WORDS = ("a", "at", "the", "what", "is", "colour", "of", "?", "yes", "no", "top", "bottom", "left", "right",
          "there") + SHAPES + COLOUR_NAMES + SIZES
VOCAB: tuple[str, ...] = SPECIALS + tuple(dict.fromkeys(_WORDS))
"""Word-level vocabulary: specials first, then every word the captions and questions use."""
WORD_TO_ID: dict[str, int] = {w: i for i, w in enumerate(VOCAB)}


def tokenize(text: str) -> list[str]:
    """Lower-case words; a trailing ``?`` becomes its own token."""
    return text.lower().replace("?", " ?").split()


def encode(text: str, length: int | None = None) -> list[int]:
    """Token ids of ``text`` (no bos/eos), right-padded with ``PAD_ID`` to ``length`` when given.

    Raises ``ValueError`` on a word outside ``VOCAB`` or a text longer than ``length``.
    """
    words = tokenize(text)
    unknown = [w for w in words if w not in WORD_TO_ID]
    if unknown:
        raise ValueError(f"words {unknown} are not in the shapes vocabulary; use words from rlprep.multimodal.shapes.VOCAB")
    ids = [WORD_TO_ID[w] for w in words]
    if length is not None:
        if len(ids) > length:
            raise ValueError(f"{text!r} has {len(ids)} tokens, more than length={length}; pass a larger length")
        ids += [PAD_ID] * (length - len(ids))
    return ids


def decode(ids) -> str:
    """Words of ``ids`` with padding dropped."""
    return " ".join(VOCAB[int(i)] for i in ids if int(i) != PAD_ID)


def caption_of(attrs) -> str:
    """Caption of one attribute row ``(shape, colour, size, position)`` given as indices."""
    shape, colour, size, position = (int(v) for v in attrs)
    return f"a {SIZES[size]} {COLOUR_NAMES[colour]} {SHAPES[shape]} at the {POSITIONS[position]}"


CAPTION_LEN = len(tokenize(caption_of((0, 0, 0, 0))))
"""Every caption has this many tokens (8)."""


@dataclass
class ShapeBatch:
    """A batch of rendered shapes with their captions."""

    images: np.ndarray
    """[N, 3, H, W] float32 in [0, 1]."""
    captions: list[str]
    """N captions, ``"a small red circle at the top left"``."""
    token_ids: np.ndarray
    """[N, CAPTION_LEN] int64 ids of the captions (no bos/eos; every caption has the same length)."""
    attributes: np.ndarray
    """[N, 4] int64 indices into SHAPES, COLOUR_NAMES, SIZES, POSITIONS (column order ``ATTRIBUTES``)."""

    def __len__(self) -> int:
        return len(self.captions)


def shape_mask(shape: str, cx: float, cy: float, radius: float, image_size: int) -> np.ndarray:
    """Boolean [H, W] mask of one shape centred at (cx, cy) pixels (x = column, y = row), half-size ``radius``."""
    if shape not in SHAPES:
        raise ValueError(f"unknown shape {shape!r}; use one of {SHAPES}")
    y, x = np.mgrid[0:image_size, 0:image_size].astype(np.float32) + 0.5  # (H, W) pixel centres
    if shape == "circle":
        return (x - cx) ** 2 + (y - cy) ** 2 <= radius ** 2
    if shape == "square":
        return (np.abs(x - cx) <= 0.8 * radius) & (np.abs(y - cy) <= 0.8 * radius)
    # upward triangle: apex at the top, base at the bottom; half-width grows linearly down the rows
    rel = (y - (cy - radius)) / (2 * radius)  # 0 at the apex, 1 at the base
    return (rel >= 0) & (rel <= 1) & (np.abs(x - cx) <= rel * radius)


def sample_attributes(n: int, rng: np.random.Generator, colour_given_shape: np.ndarray | None = None) -> np.ndarray:
    """[n, 4] attribute indices, uniform, except colour drawn from ``colour_given_shape[shape]`` when given.

    ``colour_given_shape``: [len(SHAPES), len(COLOUR_NAMES)] rows of probabilities (a co-occurrence prior).
    """
    attrs = np.stack([rng.integers(0, k, n) for k in N_VALUES], axis=1).astype(np.int64)  # (n, 4)
    if colour_given_shape is not None:
        table = np.asarray(colour_given_shape, dtype=np.float64)
        if table.shape != (len(SHAPES), len(COLOUR_NAMES)) or (table < 0).any() or \
                not np.allclose(table.sum(axis=1), 1.0):
            raise ValueError(f"colour_given_shape must be a [{len(SHAPES)}, {len(COLOUR_NAMES)}] table whose rows "
                             f"are probabilities; got shape {table.shape}")
        cumulative = table.cumsum(axis=1)[attrs[:, 0]]  # (n, C) per-row CDF
        attrs[:, 1] = np.minimum((rng.random(n)[:, None] > cumulative).sum(axis=1), len(COLOUR_NAMES) - 1)
    return attrs


def render(attributes: np.ndarray, image_size: int = 32, contrast: float = 1.0, noise_std: float = 0.0,
           rng: np.random.Generator | None = None) -> np.ndarray:
    """Render [N, 4] attribute rows to float32 images [N, 3, H, W] in [0, 1].

    The shape's colour is ``BACKGROUND + contrast * (rgb - BACKGROUND)`` (contrast 1: full colour, 0: invisible);
    centres are jittered within their quadrant; Gaussian pixel noise of std ``noise_std`` is added, then clipped.
    """
    if image_size < 8:
        raise ValueError(f"image_size must be >= 8 pixels, got {image_size}")
    if not (0.0 <= contrast <= 1.0) or noise_std < 0:
        raise ValueError(f"need 0 <= contrast <= 1 and noise_std >= 0; got {contrast}, {noise_std}")
    attributes = np.asarray(attributes)
    if attributes.ndim != 2 or attributes.shape[1] != 4:
        raise ValueError(f"attributes must be [N, 4]; got {attributes.shape}")
    rng = rng if rng is not None else np.random.default_rng(0)
    n = len(attributes)
    images = np.full((n, 3, image_size, image_size), BACKGROUND, dtype=np.float32)
    radius_of = {0: 0.13 * image_size, 1: 0.21 * image_size}  # small, large
    jitter = rng.uniform(-0.03, 0.03, size=(n, 2)) * image_size  # (n, 2) centre jitter in pixels
    for i, (shape, colour, size, position) in enumerate(attributes):
        cx = (0.25 if position % 2 == 0 else 0.75) * image_size + jitter[i, 0]
        cy = (0.25 if position < 2 else 0.75) * image_size + jitter[i, 1]
        mask = shape_mask(SHAPES[shape], cx, cy, radius_of[int(size)], image_size)  # (H, W)
        rgb = BACKGROUND + contrast * (np.asarray(COLOURS[COLOUR_NAMES[colour]], np.float32) - BACKGROUND)
        images[i][:, mask] = rgb[:, None]
    if noise_std > 0:
        images += rng.normal(0.0, noise_std, size=images.shape).astype(np.float32)
        np.clip(images, 0.0, 1.0, out=images)
    return images


def make_shapes(n: int, image_size: int = 32, seed: int = 0, contrast: float = 1.0, noise_std: float = 0.0,
                colour_given_shape: np.ndarray | None = None) -> ShapeBatch:
    """``n`` seeded random shapes with captions; see ``render`` and ``sample_attributes`` for the knobs."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    rng = np.random.default_rng(seed)
    attrs = sample_attributes(n, rng, colour_given_shape)
    images = render(attrs, image_size, contrast, noise_std, rng)
    captions = [caption_of(a) for a in attrs]
    token_ids = np.array([encode(c) for c in captions], dtype=np.int64)  # (n, CAPTION_LEN)
    return ShapeBatch(images, captions, token_ids, attrs)


def perturb_one_attribute(attributes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A copy of [N, 4] attributes with exactly one attribute per row changed to another value (hard negatives)."""
    attrs = np.array(attributes, dtype=np.int64, copy=True)
    n = len(attrs)
    which = rng.integers(0, 4, n)  # (n,) the attribute to change
    sizes = np.asarray(N_VALUES)[which]  # (n,) how many values it has
    shift = 1 + (rng.random(n) * (sizes - 1)).astype(np.int64)  # (n,) in [1, k-1]: never the same value
    attrs[np.arange(n), which] = (attrs[np.arange(n), which] + shift) % sizes
    return attrs
