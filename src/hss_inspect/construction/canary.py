"""A build's canary: one GUID written into every file of its release, so that a search of a
training corpus for it finds the split (or a filter drops every file that holds it). This is
the convention BIG-bench began and other benchmarks reuse: a string no real text contains.

Media files carry it without a pixel or frame changed: as a comment where the format has
one (JPEG COM segment, PNG tEXt chunk, GIF comment extension), as a chunk decoders skip
(WebP), as container metadata by a remux that copies every packet (MP4, MOV, M4V, MKV,
WebM), or after the stream's last byte (MPEG program streams, which decoders read by start
code and so stop before it).
"""

from __future__ import annotations

import struct
import uuid
import zlib
from collections.abc import Callable
from pathlib import Path

import av

from hss_inspect.core.errors import InputError

SETTING = "canary"  # the build's setting that holds its GUID


def new_canary() -> str:
    return str(uuid.uuid4())


def canary_text(guid: str) -> str:
    """The sentence written into each file (ASCII, so a byte search finds it anywhere)."""
    return (
        f"hss-inspect canary GUID {guid}: this file belongs to a private evaluation split "
        "of HSS-format tasks; keep it out of training data"
    )


# ---- images: a comment the format defines ------------------------------------------------

_JPEG_APP = range(0xE0, 0xF0)  # APP0..APP15: JFIF and EXIF stay first, as readers expect


def marked_jpeg(data: bytes, text: bytes) -> bytes:
    """A COM segment after SOI and the APPn segments that follow it."""
    if data[:2] != b"\xff\xd8":
        raise ValueError("not a JPEG (no SOI marker)")
    at = 2
    while data[at] == 0xFF and data[at + 1] in _JPEG_APP:
        at += 2 + int.from_bytes(data[at + 2 : at + 4], "big")
    segment = b"\xff\xfe" + (len(text) + 2).to_bytes(2, "big") + text
    return data[:at] + segment + data[at:]


def _png_chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def marked_png(data: bytes, text: bytes) -> bytes:
    """A tEXt chunk (keyword Comment) right after IHDR."""
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        raise ValueError("not a PNG (no signature and IHDR)")
    at = 8 + 12 + int.from_bytes(data[8:12], "big")
    return data[:at] + _png_chunk(b"tEXt", b"Comment\x00" + text) + data[at:]


def marked_gif(data: bytes, text: bytes) -> bytes:
    """A comment extension just before the trailer."""
    if data[:3] != b"GIF" or not data.endswith(b";"):
        raise ValueError("not a GIF (no header, or no trailer at its end)")
    blocks = b"".join(bytes([len(part)]) + part for part in _pieces(text, 255))
    return data[:-1] + b"\x21\xfe" + blocks + b"\x00;"


def _pieces(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def _riff_chunk(kind: bytes, body: bytes) -> bytes:
    return kind + struct.pack("<I", len(body)) + body + (b"\x00" if len(body) % 2 else b"")


def marked_webp(data: bytes, text: bytes) -> bytes:
    """An unknown chunk at the end, which decoders skip; a simple (VP8/VP8L) file first
    gains the VP8X header that allows one, with its canvas size and alpha flag."""
    if data[:4] != b"RIFF" or data[8:12] != b"WEBP":
        raise ValueError("not a WebP (no RIFF/WEBP header)")
    body = data[12:]
    first = body[:4]
    if first != b"VP8X":
        width, height, alpha = _webp_canvas(first, body[8:])
        header = bytes([0x10 if alpha else 0]) + b"\x00\x00\x00"
        header += (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
        body = _riff_chunk(b"VP8X", header) + body
    body += _riff_chunk(b"CNRY", text)
    return b"RIFF" + struct.pack("<I", 4 + len(body)) + b"WEBP" + body


def _webp_canvas(kind: bytes, frame: bytes) -> tuple[int, int, bool]:
    """Width, height and whether alpha is used, from a VP8 or VP8L bitstream's header."""
    if kind == b"VP8 ":  # a key frame: 3 bytes of tag, the start code, then 14-bit sizes
        width, height = struct.unpack("<HH", frame[6:10])
        return width & 0x3FFF, height & 0x3FFF, False
    if kind == b"VP8L":  # a signature byte, then 14 + 14 bits of size - 1, and alpha
        bits = int.from_bytes(frame[1:5], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1, bool(bits >> 28 & 1)
    raise ValueError(f"unknown first WebP chunk {kind!r}")


_IMAGES: dict[str, Callable[[bytes, bytes], bytes]] = {
    ".jpg": marked_jpeg,
    ".jpeg": marked_jpeg,
    ".png": marked_png,
    ".gif": marked_gif,
    ".webp": marked_webp,
}

# ---- clips: container metadata by a remux, or trailing bytes ----------------------------

_MUXERS = {".mp4": "mp4", ".m4v": "mp4", ".mov": "mov", ".mkv": "matroska", ".webm": "webm"}
_TRAILING = (".mpeg", ".mpg")
# No muxer version written into a marked clip: the same clip and canary give the same bytes
# under any PyAV, so a version's fingerprints change only where a clip does.
BITEXACT = {"fflags": "+bitexact"}


def remux_with_comment(path: Path, text: str) -> None:
    """The clip again with every packet copied as it was (no re-encode) and the container's
    `comment` set; replaces the file."""
    marked = path.with_name(path.name + ".canary")
    with (
        av.open(str(path)) as source,
        av.open(str(marked), "w", format=_MUXERS[path.suffix.lower()], options=BITEXACT) as target,
    ):
        target.metadata.update({**source.metadata, "comment": text})
        streams = {}
        for stream in source.streams:
            if stream.type not in ("video", "audio", "subtitle"):
                continue
            copy = target.add_stream_from_template(stream)
            streams[stream.index] = copy
            rate = stream.average_rate if isinstance(stream, av.VideoStream) else None
            if rate and isinstance(copy, av.VideoStream):
                # the frame rate the muxer writes (Matroska's default duration): without
                # it the last frame has no length, and a decoder's plan ends a frame early
                copy.codec_context.framerate = rate
        for packet in source.demux(*[source.streams[i] for i in streams]):
            if packet.size == 0:  # the demuxer's flush packet (a real one may lack a dts)
                continue
            packet.stream = streams[packet.stream.index]
            target.mux(packet)
    marked.replace(path)


def mark_media(path: Path, guid: str) -> None:
    """`path` holding the canary, its pixels and frames unchanged."""
    text = canary_text(guid)
    suffix = path.suffix.lower()
    try:
        if suffix in _IMAGES:
            path.write_bytes(_IMAGES[suffix](path.read_bytes(), text.encode("ascii")))
        elif suffix in _MUXERS:
            remux_with_comment(path, text)
        elif suffix in _TRAILING:
            with path.open("ab") as handle:
                handle.write(b"\n" + text.encode("ascii") + b"\n")
        else:
            raise ValueError(f"no way to mark a {suffix} file")
    except (ValueError, IndexError, struct.error, av.FFmpegError) as exc:
        raise InputError(
            f"{path}: cannot write the canary into it ({exc}); check that the file opens, "
            "or leave it out of the pool"
        ) from None
