"""Near-duplicates kept as groups rather than as every pair: the items are joined as the
pairs are found (union-find), and a pair whose items are in one group already is neither
checked nor kept. A pool of look-alikes (stills from one camera, renders of one scene)
holds a near pair for nearly every pair of items; its groups hold one join per item.

An item that keeps failing the check against candidates the hash found (a busy picture
that looks like many but is none of them) is given up on after MAX_FAILED of them, so no
item costs more than a bounded number of checks; `given_up` says how many were.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

MAX_FAILED = 12

Ids = NDArray[np.intp]


class Groups:
    """The groups of a set of keys (any strings), each key alone at first."""

    def __init__(self, keys: Sequence[str]) -> None:
        self.index = {key: n for n, key in enumerate(dict.fromkeys(keys))}
        self.keys = list(self.index)
        self._parent = np.arange(len(self.keys), dtype=np.intp)
        self._size = np.ones(len(self.keys), np.intp)
        self._failed = np.zeros(len(self.keys), np.intp)

    def ids(self, keys: Sequence[str]) -> Ids:
        return np.array([self.index[key] for key in keys], np.intp)

    def root(self, item: int) -> int:
        parent = self._parent
        top = item
        while parent[top] != top:
            top = int(parent[top])
        while parent[item] != top:  # every step on the way now points at the top
            parent[item], item = top, int(parent[item])
        return top

    def roots(self, items: Ids) -> Ids:
        found = self._parent[items]
        while True:
            above = self._parent[found]
            if np.array_equal(above, found):
                return found
            found = above

    def worth_checking(self, a: Ids, b: Ids) -> NDArray[np.bool_]:
        """Which pairs (a[k], b[k]) are in two groups, neither side given up on."""
        apart: NDArray[np.bool_] = self.roots(a) != self.roots(b)
        return apart & self.fresh(a) & self.fresh(b)

    def fresh(self, items: Ids) -> NDArray[np.bool_]:
        """Which items are not given up on."""
        found: NDArray[np.bool_] = self._failed[items] < MAX_FAILED
        return found

    def apart(self, a: int, b: int) -> bool:
        fresh = self._failed[a] < MAX_FAILED and self._failed[b] < MAX_FAILED
        return fresh and self.root(a) != self.root(b)

    def join(self, a: int, b: int) -> None:
        top_a, top_b = self.root(a), self.root(b)
        if top_a == top_b:
            return
        if self._size[top_a] < self._size[top_b]:
            top_a, top_b = top_b, top_a
        self._parent[top_b] = top_a
        self._size[top_a] += self._size[top_b]

    def failed(self, a: int, b: int) -> None:
        """A candidate pair the check turned down."""
        self._failed[[a, b]] += 1

    @property
    def given_up(self) -> int:
        """The items some candidates were not checked for (see MAX_FAILED)."""
        return int((self._failed >= MAX_FAILED).sum())

    def members(self) -> list[list[str]]:
        """The groups of more than one key, largest first, each in the keys' order."""
        found: dict[int, list[str]] = {}
        for n, key in enumerate(self.keys):
            found.setdefault(self.root(n), []).append(key)
        return sorted((keys for keys in found.values() if len(keys) > 1), key=len, reverse=True)
