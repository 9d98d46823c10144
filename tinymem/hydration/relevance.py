"""How relevant each entity is to a request: the ranking behind hydration.

Scores add up, so evidence combines:
  - lexical relevance (BM25) of the request against each entity's symbol (counted three
    times), path and text, identifiers split at snake_case and camelCase, stop words dropped;
  - a qualified name in the request (`Progress.add_task`) that is, or ends, an entity's symbol:
    +1000, the strongest evidence there is;
  - a bare name that is an entity's last name: +100 divided by how many entities share that
    name (`update` or `__init__` alone say little), and a tenth of that when the name is also
    a common English word ("make", "get", "close") written plainly: in backticks, or with its
    file named, it counts in full;
  - the entity's file named in the request or given with --file: +30 (the file's entities are
    then ordered by relevance, not by position);
  - a top-level directory named in the request (`rich`, `httpx`): x1.5;
  - vendored code and stubs (`node_modules/`, `vendor/`, `third_party/`, typeshed, `.pyi`,
    `.d.ts`): x0.25, below the project's own code;
  - a bare name whose word runs through the repository (low idf) counts less, unless in
    backticks; `#N` (overloads, setters) is not part of a name;
  - outside a named file: prose and data (rst, md, .test) x0.2, tests x0.3 unless the request
    is about tests; `@overload` stubs x0.05 (the implementation is what to show).
Only the docs the request points at are read and scored (`score`, over a `Corpus`).
Measured on bench/ask_tasks.json (see bench/README.md). Pure and deterministic.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tinymem.hydration.corpus import (
    FLAG_NONCODE,
    FLAG_STUB,
    FLAG_TEST,
    K1,
    NONCODE_FACTOR,
    STUB_FACTOR,
    TEST_FACTOR,
    VENDORED_FACTOR,
    B,
    Corpus,
    DocInfo,
    MemoryCorpus,
    doc_flags,
    impact_scale,
    plain_symbol,
    vendored,
)
from tinymem.hydration.topk import top_docs

__all__ = [
    "COMMON_WORDS",
    "NONCODE_FACTOR",
    "STUB_FACTOR",
    "TEST_FACTOR",
    "Doc",
    "Request",
    "doc_counts",
    "rank",
    "score",
    "terms",
    "vendored",
]

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_QUALIFIED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_PATHISH = re.compile(r"[\w./-]+\.[A-Za-z0-9]+")
_STOP = frozenset(
    """a an the of to in on for and or is be as at by it its with from that this should when
    not no into so than then also only instead make made their them they are was can must like
    such any all one two""".split()  # noqa: SIM905
)
# Words of plain English that are also common method names: in a request they are usually
# the English word ("make the retry optional"), rarely a reference to `Foo.make`.
COMMON_WORDS = frozenset(
    """
    add all any apply build call cancel change check clean clear close copy count create
    data default delete do done draw dump empty end error exit fail fetch file fill filter
    find first fix flush format get handle has help hide index info init insert is item join
    keep key last leave length let list load lock log make map match merge move name new next
    open parse pass path pop print process push put read reload remove render repeat replace
    report request reset resolve response restore result retry return run save search send
    set setup show size skip sort split start state status step stop store test text
    time to type update use validate value view wait walk watch write
    """.split()  # noqa: SIM905
)
_BACKTICKED = re.compile(r"`([^`\n]{1,200})`")


_NORMAL: dict[str, str] = {}  # word part -> its term ("" when dropped); parts repeat a lot


def _normal(part: str) -> str:
    t = part.lower()
    if len(t) < 2 or t in _STOP:
        t = ""
    elif t.endswith("s") and len(t) > 3 and not t.endswith("ss"):
        t = t[:-1]
    _NORMAL[part] = t
    return t


def terms(text: str) -> list[str]:
    """Lower-cased word parts of identifiers and words, stop words dropped, plurals folded.

    One regex pass over the whole text: `_` and punctuation separate parts anyway.
    """
    known = _NORMAL
    out: list[str] = []
    for part in _PART.findall(text):
        t = known.get(part)
        if t is None:
            t = _normal(part)
        if t:
            out.append(t)
    return out


@dataclass(frozen=True)
class Doc:
    key: str
    path: str
    symbol: str  # qualified, "." separated; FILE_SYMBOL for a file-level entity
    text: str
    artifact: str = ""  # the text's blob id, when known


def doc_counts(path: str, symbol: str, text_counts: Counter[str]) -> Counter[str]:
    """A doc's terms as BM25 counts them: its symbol three times, its path, its text."""
    c = Counter(terms(symbol) * 3 + terms(path))
    c.update(text_counts)
    return c


@dataclass(frozen=True)
class Request:
    words: frozenset[str]
    qualified: frozenset[str]
    paths: frozenset[str]
    terms: frozenset[str]
    code: frozenset[str]  # words written in backticks: meant as code, never as English

    @classmethod
    def parse(cls, prompt: str) -> Request:
        quoted = " ".join(_BACKTICKED.findall(prompt))
        return cls(
            words=frozenset(_WORD.findall(prompt)),
            qualified=frozenset(_QUALIFIED.findall(prompt)),
            paths=frozenset(p.strip("./") for p in _PATHISH.findall(prompt)),
            terms=frozenset(terms(prompt)),
            code=frozenset(_WORD.findall(quoted)),
        )


def _file_named(path: str, req: Request, files: frozenset[str]) -> bool:
    return path in files or path in req.paths or path.rsplit("/", 1)[-1] in req.paths


def _idf(n: int, df: int) -> float:
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


def _bm25(
    postings: dict[str, dict[int, int]],
    idf: dict[str, float],
    docs: Mapping[int, DocInfo],
    avgdl: float,
) -> dict[int, float]:
    """BM25 of `docs`, term by term over each term's postings (not every doc against every
    term: on mypy a prompt of common words hits ~10k docs). Each doc's sum is added up in
    the order of the terms, from 0.0: the same floats as doc by doc."""
    norms = {i: K1 * (1 - B + B * d.length / avgdl) for i, d in docs.items()}
    out: dict[int, float] = {}
    for t, p in postings.items():
        weight = idf[t]
        for i, f in p.items():
            if f and i in norms:
                out[i] = out.get(i, 0.0) + weight * f * (K1 + 1) / (f + norms[i])
    return out


def _bm25_of(
    tf: Mapping[str, int], order: Sequence[str], idf: Mapping[str, float], norm: float
) -> float:
    """One doc's BM25, its terms added in `order` from 0.0: the floats `_bm25` gives."""
    s = 0.0
    for t in order:
        f = tf.get(t)
        if f:
            s = s + idf[t] * f * (K1 + 1) / (f + norm)
    return s


@dataclass
class _Evidence:
    """What the request says of a doc besides BM25: names, files, directories, kinds."""

    req: Request
    prompt: str
    file_symbol: str
    idf: dict[str, float]
    defs: dict[str, int]
    in_named: set[int]
    rarest: float
    per_path: dict[str, float]  # what depends on the path alone, once per file

    def boosted(self, top: str) -> bool:
        return top in self.req.words or top.replace("_", "-") in self.prompt

    def total(self, i: int, d: DocInfo, s: float) -> float:
        """The score of doc `i` whose BM25 is `s`."""
        req = self.req
        idf = self.idf
        qualified = req.qualified
        symbol = plain_symbol(d.symbol)
        last = symbol.rsplit(".", 1)[-1]
        named_file = i in self.in_named
        if qualified and (symbol in qualified or any(q.endswith("." + symbol) for q in qualified)):
            s += 1000
        elif last in req.words and d.symbol != self.file_symbol:
            plain_word = last.lower() in COMMON_WORDS and last not in req.code and not named_file
            bonus = (10 if plain_word else 100) / self.defs.get(last, 1)
            # A name whose word runs through the whole repository (`get`, `app`, `execute`)
            # is weaker evidence than a rare one, even written as code.
            word = terms(last)
            if len(word) == 1 and word[0] in idf and last not in req.code:
                bonus *= min(1.0, 0.25 + idf[word[0]] / self.rarest)
            s += bonus
        factor = self.per_path.get(d.path)
        if factor is None:
            top = d.path.split("/", 1)[0]
            boost = 1.5 if "/" in d.path and self.boosted(top) else 1.0
            factor = boost * (VENDORED_FACTOR if vendored(d.path) else 1.0)
            self.per_path[d.path] = factor
        if named_file:
            s += 30
        else:
            if d.flags & FLAG_NONCODE:
                s *= NONCODE_FACTOR  # prose and data only when named
            if d.flags & FLAG_TEST and "test" not in req.terms:
                s *= TEST_FACTOR  # below the code they test
        if d.flags & FLAG_STUB:
            s *= STUB_FACTOR  # the implementation of an overload set, not its signatures
        return s * factor


def score(
    corpus: Corpus,
    prompt: str,
    *,
    files: Sequence[str] = (),
    file_symbol: str = "@file",
    keep: int | None = None,
    cut: float = 0.0,
) -> dict[int, float]:
    """Score of every doc something in the request points at (any other scores 0).

    Reads the postings of the request's terms, the docs its words name and the docs of the
    files it names: work in proportion to the request and what it hits, not to the corpus.

    With `keep`: only what could be among the `keep` best (by score, then id) or reach `cut`
    times the best, and the docs the request names or gives the files of, each with the
    score it has without `keep`; the postings are read best first and no further than
    that needs (`topk.py`).
    """
    req = Request.parse(prompt)
    given = frozenset(files)
    n = corpus.size or 1
    avgdl = corpus.avgdl
    lasts = set(req.words) | {q.rsplit(".", 1)[-1] for q in req.qualified}
    named = corpus.named(lasts)
    in_named = set(corpus.in_files(given | req.paths, req.paths))
    pointed: set[int] = set(in_named)
    for found in named.values():
        pointed.update(found)
    postings: dict[str, dict[int, int]] = {}
    if keep is None:
        postings = {t: corpus.postings(t) for t in req.terms}
        idf = {t: _idf(n, len(p)) for t, p in postings.items()}
        for p in postings.values():
            pointed.update(p)
    else:
        df = corpus.df(req.terms)
        idf = {t: _idf(n, df.get(t, 0)) for t in req.terms}
    docs = corpus.info(pointed)
    # An overload set, or a property and its setter, is one definition.
    defs = {
        last: len({(docs[i].path, plain_symbol(docs[i].symbol)) for i in found if i in docs})
        for last, found in named.items()
    }
    evidence = _Evidence(req, prompt, file_symbol, idf, defs, in_named, _idf(n, 0), {})
    if keep is None:
        bm25 = _bm25(postings, idf, docs, avgdl)
        return {i: evidence.total(i, d, bm25.get(i, 0.0)) for i, d in docs.items()}
    hit = [t for t in req.terms if df.get(t, 0)]  # the order of `req.terms`, as `_bm25`'s

    def exact(ids: list[int]) -> dict[int, float]:
        found = corpus.info(ids)
        tfs = corpus.tfs(list(found), hit)
        return {
            i: evidence.total(i, d, _bm25_of(tfs[i], hit, idf, K1 * (1 - B + B * d.length / avgdl)))
            for i, d in found.items()
        }

    # Outside the docs named, the top-directory boost is the only factor above one.
    boost = 1.5 if any(evidence.boosted(top) for top in corpus.tops) else 1.0
    return top_docs(
        corpus,
        hit,
        idf,
        boost * impact_scale(avgdl, corpus.impact_avgdl),
        keep=keep,
        cut=cut,
        scored=exact(sorted(pointed)),
        exact=exact,
    )


def rank(
    docs: Sequence[Doc],
    prompt: str,
    *,
    files: Sequence[str] = (),
    file_symbol: str = "@file",
) -> dict[str, float]:
    """Score of every doc of a list (0 when nothing in the request points at it)."""
    corpus = MemoryCorpus()
    for d in docs:
        flags = doc_flags(d.path, d.text[:200].encode())
        corpus.add(d.path, d.symbol, doc_counts(d.path, d.symbol, Counter(terms(d.text))), flags)
    found = score(corpus, prompt, files=files, file_symbol=file_symbol)
    return {d.key: found.get(i, 0.0) for i, d in enumerate(docs)}
