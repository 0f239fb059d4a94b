"""Media as the inline `data:` URIs Inspect sends to providers, and JPEG frames held as
those URIs (as a cache entry stores them), so a request takes each frame's URI without
encoding it again."""

from __future__ import annotations

import base64
import itertools
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
    """JPEG frames held as their data URIs, end to end in one text (ASCII bytes).

    A frame's URI is one copy out of the text (`uris`); its bytes are decoded only when
    asked for (indexing, iterating), which only the rarer paths do (a frame budget to
    shrink to, a rebuild, the agentic tools). Equal to any sequence of the same bytes.
    """

    def __init__(self, text: bytes, sizes: Sequence[int]) -> None:
        lengths = [jpeg_uri_length(size) for size in sizes]
        if sum(lengths) != len(text):
            raise ValueError(f"{len(text)} characters do not hold {len(sizes)} frames' URIs")
        self._text = text
        self._starts = tuple(itertools.accumulate(lengths, initial=0))
        self.sizes = tuple(sizes)

    @classmethod
    def encode(cls, jpegs: Sequence[bytes]) -> UriFrames:
        if isinstance(jpegs, UriFrames):
            return jpegs
        text = b"".join(_JPEG_PREFIX + base64.b64encode(jpeg) for jpeg in jpegs)
        return cls(text, [len(jpeg) for jpeg in jpegs])

    @property
    def text(self) -> bytes:
        """Every frame's data URI, end to end: what a cache entry stores."""
        return self._text

    def uris(self) -> list[str]:
        view = memoryview(self._text)
        return [str(view[a:b], "ascii") for a, b in itertools.pairwise(self._starts)]

    def subset(self, indices: Sequence[int]) -> UriFrames:
        """The frames at `indices`, without decoding them."""
        view = memoryview(self._text)
        text = b"".join(view[self._starts[i] : self._starts[i + 1]] for i in indices)
        return UriFrames(text, [self.sizes[i] for i in indices])

    def __len__(self) -> int:
        return len(self.sizes)

    @overload
    def __getitem__(self, index: int) -> bytes: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[bytes, ...]: ...

    def __getitem__(self, index: int | slice) -> bytes | tuple[bytes, ...]:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(len(self))[index])
        i = range(len(self))[index]  # a negative or out-of-range index as a tuple takes it
        payload = memoryview(self._text)[self._starts[i] + len(_JPEG_PREFIX) : self._starts[i + 1]]
        return base64.b64decode(payload)

    def __iter__(self) -> Iterator[bytes]:
        return (self[i] for i in range(len(self)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, UriFrames):
            return self.sizes == other.sizes and self._text == other._text
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
