"""Media as the inline `data:` URIs Inspect sends to providers, and JPEG frames held as
those URIs (as a cache entry stores them), so a request takes each frame's URI without
encoding it again."""

from __future__ import annotations

import base64
import itertools
import mmap
from collections.abc import Iterator, Sequence
from typing import overload

JPEG = "image/jpeg"
_JPEG_PREFIX = f"data:{JPEG};base64,".encode("ascii")


def data_uri(data: bytes, mime: str) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def decode_data_uri(uri: str) -> bytes:
    _, _, payload = uri.partition(",")
    return base64.b64decode(payload)


def jpeg_uri_length(size: int) -> int:
    """Characters of the data URI of a JPEG of `size` bytes (base64: 4 for every 3, padded)."""
    return len(_JPEG_PREFIX) + 4 * -(-size // 3)


class UriFrames(Sequence[bytes]):
    """JPEG frames held as their data URIs (as a cache entry stores them).

    A request takes the URIs themselves (`uris`); a frame's bytes are decoded only when
    asked for (indexing, iterating), which only the rarer paths do (a frame budget to
    shrink to, a rebuild, the agentic tools). Equal to any sequence of the same bytes.
    """

    def __init__(self, uris: Sequence[str], sizes: Sequence[int]) -> None:
        if len(uris) != len(sizes) or any(
            len(uri) != jpeg_uri_length(size) for uri, size in zip(uris, sizes, strict=False)
        ):
            raise ValueError(f"{len(uris)} data URIs do not hold frames of {len(sizes)} sizes")
        self._uris = tuple(uris)
        self.sizes = tuple(sizes)

    @classmethod
    def from_text(cls, text: bytes | mmap.mmap, sizes: Sequence[int]) -> UriFrames:
        """The frames of `sizes` bytes whose URIs `text` holds end to end (ASCII): each
        URI decoded straight out of it, one copy."""
        starts = list(itertools.accumulate((jpeg_uri_length(s) for s in sizes), initial=0))
        if starts[-1] != len(text):
            raise ValueError(f"{len(text)} characters do not hold {len(sizes)} frames' URIs")
        with memoryview(text) as view:
            uris = [str(view[a:b], "ascii") for a, b in itertools.pairwise(starts)]
        return cls(uris, sizes)

    @classmethod
    def encode(cls, jpegs: Sequence[bytes]) -> UriFrames:
        if isinstance(jpegs, UriFrames):
            return jpegs
        return cls([data_uri(jpeg, JPEG) for jpeg in jpegs], [len(jpeg) for jpeg in jpegs])

    def text(self) -> bytes:
        """Every frame's data URI, end to end: what a cache entry stores."""
        return "".join(self._uris).encode("ascii")

    def uris(self) -> list[str]:
        return list(self._uris)

    def subset(self, indices: Sequence[int]) -> UriFrames:
        """The frames at `indices`, without decoding them."""
        return UriFrames([self._uris[i] for i in indices], [self.sizes[i] for i in indices])

    def __len__(self) -> int:
        return len(self.sizes)

    @overload
    def __getitem__(self, index: int) -> bytes: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[bytes, ...]: ...

    def __getitem__(self, index: int | slice) -> bytes | tuple[bytes, ...]:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(len(self))[index])
        return base64.b64decode(self._uris[index][len(_JPEG_PREFIX) :])

    def __iter__(self) -> Iterator[bytes]:
        return (self[i] for i in range(len(self)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, UriFrames):
            return self._uris == other._uris
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"UriFrames({len(self)} frames, {sum(self.sizes)} bytes)"


def frame_uris(jpegs: Sequence[bytes]) -> list[str]:
    """Each frame's data URI: taken from frames held as URIs, else encoded."""
    if isinstance(jpegs, UriFrames):
        return jpegs.uris()
    return [data_uri(jpeg, JPEG) for jpeg in jpegs]


def frame_sizes(jpegs: Sequence[bytes]) -> tuple[int, ...]:
    """Each frame's bytes, without decoding frames held as URIs."""
    return jpegs.sizes if isinstance(jpegs, UriFrames) else tuple(len(jpeg) for jpeg in jpegs)
