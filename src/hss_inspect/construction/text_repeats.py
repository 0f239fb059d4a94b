"""Questions and reference answers that nearly repeat one already written: one of the
reference release's (a task copied from the public split is no longer private), or another
task's of the build (two tasks that are one).

Two texts are near repeats when half or more of the word pairs of either occur in the
other (bigram containment), each text having at least MIN_WORDS words: rewording a few
words, or adding a sentence, keeps most pairs; two texts on one topic share few. A question
is compared with questions, a reference with references. What is found is stored on the
submitted revision as a `repeated-text` flag for its reviewers, as the checks' flags are.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from hss_inspect.construction import store
from hss_inspect.construction.store import Flag
from hss_inspect.web.store import rows as query

MIN_WORDS = 8
CONTAINMENT = 0.5
REPEATED_TEXT = "repeated-text"
QUESTION, REFERENCE = "question", "reference"
_WORD = re.compile(r"\w+")
# Up to this many tasks (a submission from the pages), each text is compared with every
# other; more (an import), they are looked up in an index (see TextScan).
SCAN_AT_MOST = 16


@dataclass(frozen=True)
class Text:
    """A text to compare against: whose (`owner`, as shown to a reviewer), which field."""

    owner: str
    field: str
    text: str


# A server compares each submission with every text of the build: the pairs of the texts
# of a build at the paper's scale (3,466 tasks and the release's 522, two texts each) are
# kept rather than made again at every submission.
PAIRS_KEPT = 8_192


@functools.lru_cache(maxsize=PAIRS_KEPT)
def word_pairs(text: str) -> frozenset[tuple[str, str]]:
    """The text's adjacent word pairs, case folded; empty below MIN_WORDS words."""
    words = _WORD.findall(text.casefold())
    if len(words) < MIN_WORDS:
        return frozenset()
    return frozenset(itertools.pairwise(words))


def containment(a: frozenset[tuple[str, str]], b: frozenset[tuple[str, str]]) -> float:
    """The larger of the shares of either's pairs found in the other."""
    if not a or not b:
        return 0.0
    shared = len(a & b)
    return max(shared / len(a), shared / len(b))


class TextScan:
    """Texts compared one by one with the text looked up. For the texts of one submission
    this is cheaper than an index of thousands, whose counts and prefixes cost more to
    make than the comparisons they save."""

    def __init__(self, texts: Iterable[Text]) -> None:
        self.texts: list[Text] = []
        self.pairs: list[frozenset[tuple[str, str]]] = []
        for text in texts:
            pairs = word_pairs(text.text)
            if pairs:
                self.texts.append(text)
                self.pairs.append(pairs)

    def candidates(self, pairs: frozenset[tuple[str, str]]) -> Iterable[int]:
        return (n for n, other in enumerate(self.pairs) if not pairs.isdisjoint(other))

    def repeats(self, text: Text, skip_owner: str = "") -> list[tuple[Text, float]]:
        """The texts of the same field that `text` nearly repeats, nearest first."""
        pairs = word_pairs(text.text)
        found = []
        for n in self.candidates(pairs):
            other = self.texts[n]
            if other.field != text.field or other.owner == skip_owner:
                continue
            share = containment(pairs, self.pairs[n])
            if share >= CONTAINMENT:
                found.append((other, share))
        return sorted(found, key=lambda hit: (-hit[1], hit[0].owner))


class TextIndex(TextScan):
    """Texts looked up by their word pairs, so a text is compared only with the few that
    can nearly repeat it, not with every text (an import of hundreds of tasks into a
    build of thousands).

    Exact by counting (prefix filtering): order all pairs once, rarest first. If the
    smaller of two texts has n pairs, a near repeat shares at least CONTAINMENT * n of
    them, so at least one of the smaller's first `prefix_length(n)` pairs is shared. A
    text is therefore looked up by its own prefix among every text's pairs, and by all its
    pairs among the other texts' prefixes; the rare pairs that make up prefixes hold few
    texts, the common ones ("of the") are reached only from the small prefix index."""

    def __init__(self, texts: Iterable[Text], looked_up: Iterable[Text] | None = None) -> None:
        """`looked_up`: the only texts that will be looked up (None: any), so that only the
        pairs their lookups can reach are indexed."""
        super().__init__(texts)
        frequency = Counter(pair for pairs in self.pairs for pair in pairs)
        order = sorted(frequency, key=lambda pair: (frequency[pair], pair))
        self.rank = {pair: n for n, pair in enumerate(order)}
        asked = self.pairs if looked_up is None else [word_pairs(t.text) for t in looked_up]
        starts = set().union(*(self.prefix(pairs) for pairs in asked))
        reached = set().union(*asked)
        self.holding: dict[tuple[str, str], list[int]] = defaultdict(list)
        self.leading: dict[tuple[str, str], list[int]] = defaultdict(list)
        for n, pairs in enumerate(self.pairs):
            for pair in pairs & starts:
                self.holding[pair].append(n)
            for pair in reached.intersection(self.prefix(pairs, indexed=True)):
                self.leading[pair].append(n)

    def prefix(
        self, pairs: frozenset[tuple[str, str]], indexed: bool = False
    ) -> list[tuple[str, str]]:
        """`indexed`: the pairs of an indexed text, every one ranked. A pair of no indexed
        text (a text looked up from outside) can be shared with none: first, as rarest."""
        rank = self.rank.__getitem__ if indexed else (lambda pair: self.rank.get(pair, -1))
        rarest = sorted(pairs, key=rank)
        return rarest[: prefix_length(len(rarest))]

    def candidates(self, pairs: frozenset[tuple[str, str]]) -> set[int]:
        found = {n for pair in self.prefix(pairs) for n in self.holding.get(pair, ())}
        return found | {n for pair in pairs for n in self.leading.get(pair, ())}


def prefix_length(count: int) -> int:
    """How many of a text's `count` pairs, rarest first, must hold a shared one when the
    text is the smaller of a near repeat: all but the fewest a repeat may leave unshared
    (one more than needed, so the rounding of CONTAINMENT * count cannot lose a repeat)."""
    return min(count, count - math.floor(CONTAINMENT * count) + 1)


def reference_texts(build: Path) -> list[Text]:
    name = store.settings_of(build).get("against") or "the reference release"
    rows = query(build, "SELECT task_id, field, text FROM reference_texts")
    return [Text(f"{name} task {task_id}", field, text) for task_id, field, text in rows]


def task_texts(build: Path) -> list[tuple[tuple[str, int], Text]]:
    """The question and reference of each task's latest submitted revision."""
    rows = query(
        build,
        "SELECT r.task_id, r.revision, r.prompt, r.reference FROM revisions r JOIN tasks t "
        "ON r.task_id = t.task_id AND r.revision = t.revision WHERE r.submitted_at IS NOT NULL",
    )
    texts = []
    for task_id, revision, prompt, reference in rows:
        owner = f"task {task_id} of this build"
        texts += [((task_id, revision), Text(owner, QUESTION, prompt)),
                  ((task_id, revision), Text(owner, REFERENCE, reference))]  # fmt: skip
    return texts


def repeat_flag(hits: Sequence[tuple[Text, Text, float]]) -> Flag:
    """One flag for a revision: each of its texts that nearly repeats another, and which."""
    parts = [
        f"its {mine.field} nearly repeats the {other.field} of {other.owner} "
        f"({share:.0%} of word pairs shared)"
        for mine, other, share in hits
    ]
    detail = "Near-repeated text: " + "; ".join(parts) + "."
    return Flag(REPEATED_TEXT, "word pairs", True, detail)


def flag_repeated_text(build: Path, task_ids: Sequence[str]) -> int:
    """Compare the latest submitted revision of each task with the reference release's
    texts and the other tasks' of the build; store a flag on it where any nearly repeats
    one. How many were flagged."""
    written = task_texts(build)
    wanted = set(task_ids)
    asked = [(key, text) for key, text in written if key[0] in wanted]
    texts = [*reference_texts(build), *(text for _, text in written)]
    index = (
        TextIndex(texts, [text for _, text in asked])
        if len(wanted) > SCAN_AT_MOST
        else TextScan(texts)
    )
    hits: dict[tuple[str, int], list[tuple[Text, Text, float]]] = defaultdict(list)
    for key, text in asked:
        found = index.repeats(text, skip_owner=text.owner)[:3]
        hits[key] += [(text, other, share) for other, share in found]
    flagged = [(task_id, revision, repeat_flag(found))
               for (task_id, revision), found in hits.items() if found]  # fmt: skip
    store.store_flags(build, flagged, "")
    return len(flagged)
