"""The offline scorers by name: what ``rlprep mock --scorer`` picks from, the judge's fallback and the bench measure.

Each is ``fn(question, *answers) -> Judgement``: the keyword scorer (:func:`rlprep.interview.scoring.keyword_judgement`)
and the claims scorer (:func:`rlprep.interview.claims.judge`), which builds on the keyword scorer's helpers. The table
lives here, beside neither, so that neither module imports the other back.
"""

from __future__ import annotations

from typing import Callable

from rlprep.errors import RlprepError
from rlprep.interview.claims import judge as claims_judgement
from rlprep.interview.scoring import Judgement, keyword_judgement

OFFLINE_SCORERS: dict[str, Callable[..., Judgement]] = {"claims": claims_judgement, "keyword": keyword_judgement}
"""Offline scorer name -> ``fn(question, *answers) -> Judgement``; the first is the default."""
DEFAULT_SCORER = "claims"


def offline_scorer(name: str | None) -> Callable[..., Judgement]:
    """The offline scorer called ``name`` (None: :data:`DEFAULT_SCORER`)."""
    name = name or DEFAULT_SCORER
    if name not in OFFLINE_SCORERS:
        raise RlprepError(f"unknown scorer {name!r}", f"choose from: {', '.join(OFFLINE_SCORERS)}")
    return OFFLINE_SCORERS[name]
