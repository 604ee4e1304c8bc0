"""The one tokenizer every BM25 backend receives.

Both backends (``rank_bm25`` and ``bm25s``) are handed the *same* token lists
produced here, so any difference between them is a difference of formula, never
of text processing.

Pipeline, in order:

1. lower-case the text (``str.lower``, Unicode aware);
2. split on every character that is not a letter or a digit: tokens are the
   maximal runs matched by the regular expression ``[^\\W_]+`` (so ``mach-2``
   gives ``mach``, ``2`` and ``3.5`` gives ``3``, ``5``; accented letters stay);
3. drop stop words (default: Lucene's 33-word English list, the list bm25s ships
   as ``STOPWORDS_EN``; ``"sklearn"`` selects scikit-learn's 318 words; ``"none"``
   keeps everything);
4. optionally stem with the Snowball English (Porter 2) stemmer of PyStemmer.

Stop words are removed before stemming, so the list is matched against surface
forms.

Example:
    >>> Tokenizer()("What similarity laws must be obeyed?")
    ['what', 'similarity', 'laws', 'must', 'obeyed']
    >>> Tokenizer(stemmer="english")("heated flows")
    ['heat', 'flow']

Source:
    Lucene ``EnglishAnalyzer.ENGLISH_STOP_WORDS_SET`` (identical to
    ``bm25s.stopwords.STOPWORDS_EN``); Porter, "Snowball: A language for stemming
    algorithms" (2001), https://snowballstem.org/algorithms/english/stemmer.html.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from workbench.errors import UnknownNameError

LUCENE_ENGLISH_STOPWORDS: frozenset[str] = frozenset(
    (
        "a an and are as at be but by for if in into is it no not of on or such that the their "
        "then there these they this to was will with"
    ).split()
)
"""Lucene's English stop list (33 words), the same as ``bm25s.stopwords.STOPWORDS_EN``."""

StemmerName = Literal["english"]
"""Stemmers available through PyStemmer (Snowball). ``None`` means no stemming."""

_TOKEN_RE = re.compile(r"[^\W_]+")


def _sklearn_stopwords() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS  # lazy: heavy import

    return frozenset(ENGLISH_STOP_WORDS)


STOPWORD_LISTS: dict[str, Callable[[], frozenset[str]]] = {
    "english": lambda: LUCENE_ENGLISH_STOPWORDS,
    "sklearn": _sklearn_stopwords,
    "none": lambda: frozenset(),
}
"""Named stop-word lists; ``english`` is Lucene's list."""

STEMMERS: tuple[str, ...] = ("english",)


@lru_cache(maxsize=8)
def _stopwords(name: str) -> frozenset[str]:
    if name not in STOPWORD_LISTS:
        raise UnknownNameError("stop-word list", name, STOPWORD_LISTS)
    return STOPWORD_LISTS[name]()


@lru_cache(maxsize=4)
def _stemmer(name: str) -> Callable[[list[str]], list[str]]:
    if name not in STEMMERS:
        raise UnknownNameError("stemmer", name, STEMMERS)
    import Stemmer  # PyStemmer; lazy so that importing pooling stays cheap

    return Stemmer.Stemmer(name).stemWords  # type: ignore[no-any-return]


@dataclass(frozen=True, slots=True)
class Tokenizer:
    """Lower-case, split on non-alphanumerics, drop stop words, optionally stem.

    Args:
        stopwords: name of the stop-word list: ``"english"`` (Lucene's 33 words,
            default), ``"sklearn"`` (scikit-learn's 318 words) or ``"none"``.
        stemmer: ``None`` (no stemming, default) or ``"english"`` (Snowball
            English via PyStemmer).

    Raises:
        UnknownNameError: an unknown stop-word list or stemmer (raised on first use
            and by ``validate``).

    Example:
        >>> Tokenizer(stopwords="none")("The Mach-2 flow")
        ['the', 'mach', '2', 'flow']
    """

    stopwords: str = "english"
    stemmer: StemmerName | None = None

    def validate(self) -> Tokenizer:
        """Check the names now rather than on first use; returns ``self``."""
        _stopwords(self.stopwords)
        if self.stemmer is not None:
            _stemmer(self.stemmer)
        return self

    @property
    def params(self) -> dict[str, str | None]:
        """The settings recorded with a run (JSON-serialisable)."""
        return {"tokenizer": "lower+split-non-alnum", "stopwords": self.stopwords,
                "stemmer": self.stemmer}

    def __call__(self, text: str) -> list[str]:
        """Tokens of one text, in text order (repeats kept: they are term frequencies)."""
        stop = _stopwords(self.stopwords)
        tokens = [t for t in _TOKEN_RE.findall(text.lower()) if t not in stop]
        if self.stemmer is not None and tokens:
            tokens = _stemmer(self.stemmer)(tokens)
        return tokens

    def many(self, texts: Iterable[str]) -> list[list[str]]:
        """Tokens of each text, in input order."""
        return [self(t) for t in texts]
