"""A clip's frames kept as their data URIs in the media cache: a request takes them without
encoding a frame, its entry is checked once a process, an entry of the earlier format
(JPEG bytes) is converted rather than decoded again, and no byte a model is sent changes:
the request bodies from a decode, from an entry and from a converted entry are the same,
and their images are the clip's frames encoded independently here."""

from __future__ import annotations

import base64
import hashlib
import json
import zlib
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from hss_inspect.core.settings import FrameSettings
from hss_inspect.media import frame_cache, frame_files, uri
from hss_inspect.media.facts import file_sha256
from hss_inspect.media.uri import UriFrames, frame_uris
from hss_inspect.media.video import sample_video
from tests.support.fixture_repo import write_video
from tests.support.runs import CANDIDATE, run_eval
from tests.support.servers import scripted_models


def encoded(jpeg: bytes) -> str:
    return "data:image/jpeg;base64," + base64.b64encode(jpeg).decode("ascii")


def test_frames_held_as_uris_give_each_frame_and_its_uri() -> None:
    jpegs = [b"\xff\xd8 one", b"\xff\xd8 frame two", b"", b"\xff\xd8 3\xff\xd9"]
    frames = UriFrames.encode(jpegs)
    assert frames.uris() == [encoded(j) for j in jpegs]
    assert frames.text() == "".join(encoded(j) for j in jpegs).encode("ascii")
    assert UriFrames.from_text(frames.text(), frames.sizes) == frames
    assert list(frames) == jpegs and frames[-1] == jpegs[-1] and frames[1:3] == tuple(jpegs[1:3])
    assert frames.sizes == tuple(len(j) for j in jpegs) and len(frames) == 4
    assert frames == tuple(jpegs) and tuple(jpegs) == frames and frames != jpegs[:3]
    assert frames.subset([3, 0]).uris() == [encoded(jpegs[3]), encoded(jpegs[0])]
    assert frame_uris(tuple(jpegs)) == frames.uris()
    with pytest.raises(IndexError):
        frames[4]
    with pytest.raises(ValueError, match="do not hold"):
        UriFrames.from_text(frames.text()[:-1], frames.sizes)
    with pytest.raises(ValueError, match="do not hold"):
        UriFrames(frames.uris(), [*frames.sizes[:-1], frames.sizes[-1] + 3])


def entry_of(clip: Path, settings: FrameSettings) -> Path:
    return frame_cache.cache_root() / "frames" / frame_cache.frames_key(file_sha256(clip), settings)


SETTINGS = FrameSettings(fps=4.0)


def clip_and_its_uris(tmp_path: Path) -> tuple[Path, list[str]]:
    """A 3 s clip, and the data URIs of its frames at SETTINGS, decoded and encoded here."""
    clip = tmp_path / "clip.mp4"
    write_video(clip, fps=10, seconds=3.0)
    return clip, [encoded(j) for j in sample_video(clip, SETTINGS).jpegs]


def test_a_request_from_an_entry_encodes_no_frame_and_checks_it_once_a_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clip, expected = clip_and_its_uris(tmp_path)
    settings = SETTINGS
    decoded = frame_cache.cached_sample_video(clip, settings)
    assert frame_uris(decoded.jpegs) == expected

    def no_encoding(data: bytes) -> bytes:
        raise AssertionError("a frame was base64-encoded again")

    checked: list[int] = []
    real_crc32 = zlib.crc32

    def counted(data: Any, value: int = 0) -> int:
        checked.append(len(data))
        return real_crc32(data, value)

    monkeypatch.setattr(uri.base64, "b64encode", no_encoding)
    monkeypatch.setattr(frame_files.zlib, "crc32", counted)
    first = frame_cache.cached_sample_video(clip, settings)
    second = frame_cache.cached_sample_video(clip, settings)
    assert frame_uris(first.jpegs) == frame_uris(second.jpegs) == expected
    assert first == decoded and first.frame_sizes == decoded.frame_sizes
    entry = entry_of(clip, settings)
    assert checked == [(entry / frame_files.FRAME_URIS).stat().st_size]  # once, not twice

    # the entry replaced (a new file, as a rebuild renames into place) is checked again
    checked.clear()
    replaced = entry / "replaced"
    replaced.write_bytes((entry / frame_files.FRAME_URIS).read_bytes())
    replaced.rename(entry / frame_files.FRAME_URIS)
    assert frame_files.read_frames(entry) is not None and len(checked) == 1


def write_first_format_entry(cache: Path, clip: Path, settings: FrameSettings) -> Path:
    """The entry the previous release wrote: under its key (no format in it), the JPEG
    frames end to end in `frames.bin` with their CRC-32 in `frames.json`."""
    digest = file_sha256(clip)
    spec = {"video": digest, "settings": settings.as_dict(), "v": 3}
    key = hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()
    video = sample_video(clip, settings)
    entry = cache / "frames" / key
    entry.mkdir(parents=True)
    blob = b"".join(video.jpegs)
    (entry / "frames.bin").write_bytes(blob)
    manifest = {
        **{k: v for k, v in asdict(video).items() if k not in ("jpegs", "truncation")},
        "truncation": None,
        "frame_count": len(video.jpegs),
        "thinned": False,
        "video_sha256": digest,
        "settings": settings.as_dict(),
        "frame_bytes": [len(j) for j in video.jpegs],
        "frame_sha256": [hashlib.sha256(j).hexdigest() for j in video.jpegs],
        "blob_crc32": zlib.crc32(blob),
    }
    (entry / "frames.json").write_text(json.dumps(manifest))
    return entry


def test_an_entry_of_the_first_format_is_converted_not_decoded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clip, expected = clip_and_its_uris(tmp_path)
    settings = SETTINGS
    old = write_first_format_entry(frame_cache.cache_root(), clip, settings)

    def no_decoding(*args: object, **kwargs: object) -> object:
        raise AssertionError("the clip was decoded again")

    monkeypatch.setattr(frame_cache, "sample_video_sweep", no_decoding)
    converted = frame_cache.cached_sample_video(clip, settings)
    assert frame_uris(converted.jpegs) == expected
    assert (entry_of(clip, settings) / frame_files.FRAME_URIS).is_file()
    assert (old / "frames.bin").is_file()  # left for the release that made it
    read = frame_cache.cached_sample_video(clip, settings)
    assert isinstance(read.jpegs, UriFrames) and read.jpegs.uris() == expected
    # a thinned set is taken from the converted entry too: a decode thinned alone's frames
    thinned = FrameSettings(fps=4.0, max_images=3)
    from_entry = frame_cache.cached_sample_video(clip, thinned)
    monkeypatch.undo()
    assert frame_uris(from_entry.jpegs) == [encoded(j) for j in sample_video(clip, thinned).jpegs]


def candidate_bodies(request_log: Path) -> list[dict[str, Any]]:
    bodies = [json.loads(line) for line in request_log.read_text().splitlines()]
    return [b for b in bodies if b["model"] == CANDIDATE.rsplit("/", 1)[1]]


def image_urls(body: dict[str, Any]) -> list[str]:
    parts = body["messages"][-1]["content"]
    return [p["image_url"]["url"] for p in parts if p["type"] == "image_url"]


@pytest.mark.slow
@pytest.mark.inspect_api
def test_request_bodies_are_the_same_from_a_decode_an_entry_and_a_converted_entry(
    hss_repo: Path, tmp_path: Path
) -> None:
    clip = hss_repo / "media" / "vid_cfr.mp4"
    settings = FrameSettings()
    expected = [encoded(j) for j in sample_video(clip, settings).jpegs]
    run = ("--sample-id", "vid-pass", "--max-samples", "1", "--log-level", "info")
    bodies = {}
    for name, epochs in (("decoded then read", 2), ("converted", 1)):
        cache = tmp_path / name / "cache"
        if name == "converted":
            write_first_format_entry(cache, clip, settings)
        with scripted_models(tmp_path / name / "server") as (base_url, request_log):
            log, done = run_eval(
                "hss_inspect/hss_video",
                tmp_path / name / "logs",
                base_url,
                *run,
                task_args={"dataset": hss_repo},
                epochs=epochs,
                env={"HSS_INSPECT_CACHE": str(cache)},
            )
            bodies[name] = candidate_bodies(request_log)
        output = done.stdout + done.stderr
        assert log.status == "success", output
        decodes = " ".join(output.split()).count("hss media: clip")
        assert decodes == (1 if name == "decoded then read" else 0), output
    # epoch 1 was sent the frames it decoded, epoch 2 the entry's, the third run the
    # converted entry's: one body, whose images are the clip's frames encoded here
    first, from_entry = bodies["decoded then read"]
    (converted,) = bodies["converted"]
    assert image_urls(first) == expected
    assert json.dumps(first) == json.dumps(from_entry) == json.dumps(converted)
