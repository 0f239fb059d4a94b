"""A build's canary (issue 40): a GUID written into every file of its release without a pixel
or frame changed, found by `grep -r GUID`; the rows' `canary` field ignored by the loader;
a build made before canaries gains one at its first export, kept."""

from __future__ import annotations

import json
import re
import subprocess
import uuid
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from hss_inspect.construction import store
from hss_inspect.construction.canary import canary_text, mark_media, new_canary
from hss_inspect.core.errors import InputError
from hss_inspect.core.settings import FrameSettings
from hss_inspect.data.release import open_release
from hss_inspect.media.image import upright_image
from hss_inspect.media.video import sample_video
from tests.support.fixture_repo import gradient_frame, write_image, write_video

GUID = "0f9e8d7c-6b5a-4948-8372-6150f4e3d2c1"


def pixels(path: Path) -> np.ndarray:
    """The image as the package decodes it for a model: upright, every pixel."""
    image, _ = upright_image(path.read_bytes(), path)
    return np.asarray(image)


def frames(path: Path, fps: float = 10.0) -> tuple[tuple[float, ...], list[bytes]]:
    """The clip as the package decodes it for a model, at a rate that takes every frame
    (the clip's own): each frame's time and its JPEG."""
    sampled = sample_video(path, FrameSettings(fps=fps))
    return sampled.timestamps, list(sampled.jpegs)


def write_still(path: Path, fmt: str, **options: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    rgb = gradient_frame(40, 30, 3)
    mode = "RGBA" if options.pop("alpha", False) else "RGB"
    image = Image.fromarray(rgb).convert(mode)
    if mode == "RGBA":
        image.putalpha(Image.fromarray((np.arange(40 * 30) % 251).astype("uint8").reshape(30, 40)))
    image.save(path, format=fmt, **options)


IMAGES = {
    "exif.jpg": lambda p: write_image(p, (80, 40), "JPEG", orientation=6),
    "plain.jpeg": lambda p: write_still(p, "JPEG", quality=85),
    "plain.png": lambda p: write_still(p, "PNG"),
    "alpha.png": lambda p: write_still(p, "PNG", alpha=True),
    "still.gif": lambda p: write_still(p, "GIF"),
    "lossy.webp": lambda p: write_still(p, "WEBP", quality=80),
    "lossless-alpha.webp": lambda p: write_still(p, "WEBP", lossless=True, alpha=True),
    "lossy-alpha.webp": lambda p: write_still(p, "WEBP", quality=80, alpha=True),
}
# MPEG-1 and -2 take only the broadcast frame rates: those clips run at 25 fps.
CLIPS = {
    "h264.mp4": {"codec": "libx264"},
    "h264.m4v": {"codec": "libx264"},
    "h264.mov": {"codec": "libx264"},
    "h264.mkv": {"codec": "libx264"},
    "vp9.webm": {"codec": "libvpx-vp9"},
    "mpeg2.mpg": {"codec": "mpeg2video", "fps": 25},
    "mpeg1.mpeg": {"codec": "mpeg1video", "fps": 25},
}


def holds(path: Path, guid: str) -> bool:
    return guid.encode() in path.read_bytes()


@pytest.mark.parametrize("name", sorted(IMAGES))
def test_an_image_holds_the_canary_with_every_pixel_unchanged(name: str, tmp_path: Path) -> None:
    path = tmp_path / name
    IMAGES[name](path)
    before, size = pixels(path), path.stat().st_size
    with Image.open(path) as opened:
        kind = opened.format
    mark_media(path, GUID)
    assert holds(path, GUID) and path.stat().st_size > size
    np.testing.assert_array_equal(pixels(path), before)
    with Image.open(path) as opened:
        assert opened.format == kind
        opened.verify()


@pytest.mark.parametrize("name", sorted(CLIPS))
def test_a_clip_holds_the_canary_with_every_frame_unchanged(name: str, tmp_path: Path) -> None:
    path = tmp_path / name
    settings = {"fps": 10, **CLIPS[name]}
    write_video(path, seconds=1.6, **settings)  # type: ignore[arg-type]
    fps = float(settings["fps"])
    before = frames(path, fps)
    assert len(before[1]) >= 16
    mark_media(path, GUID)
    assert holds(path, GUID)
    assert frames(path, fps) == before


def test_a_file_that_is_not_its_format_is_refused_with_its_name(tmp_path: Path) -> None:
    path = tmp_path / "fake.png"
    path.write_bytes(b"not a png at all")
    with pytest.raises(InputError, match=r"fake\.png: cannot write the canary into it"):
        mark_media(path, GUID)


def test_each_build_has_its_own_guid() -> None:
    made = {new_canary() for _ in range(50)}
    assert len(made) == 50
    assert all(uuid.UUID(g).version == 4 for g in made)
    assert GUID in canary_text(GUID) and canary_text(GUID).isascii()


# ---- the release of a build ---------------------------------------------------------------


@pytest.mark.slow
def test_every_file_of_an_exported_release_holds_the_builds_canary(tmp_path: Path) -> None:
    from tests.support.build_pool import admitted_build

    build, out = admitted_build(tmp_path)
    guid = store.settings_of(build.path)["canary"]
    assert uuid.UUID(guid).version == 4
    every = sorted(p for p in out.rglob("*") if p.is_file())
    media = [p for p in every if p.parent.name != "data" and p.suffix not in (".md", ".sha256")]
    assert media and any(p.suffix == ".mp4" for p in media)
    found = subprocess.run(["grep", "-rl", guid, str(out)], capture_output=True, text=True)
    assert sorted(Path(line) for line in found.stdout.splitlines()) == every
    # the rows carry it as a field the loader passes over
    lines = (out / "data" / "test.jsonl").read_text().splitlines()
    assert all(json.loads(line)["canary"] == guid for line in lines)
    rows = open_release(str(out), "main").read_rows()
    assert [r.task_id for r in rows] == [json.loads(line)["task_id"] for line in lines]
    # the card says what it is for; sha256sum -c passes over the comment line
    card = (out / "README.md").read_text()
    assert re.search(rf"Canary GUID `{guid}`.*training", card, re.S)
    checked = subprocess.run(
        ["sha256sum", "-c", "checksums.sha256"], cwd=out, capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.count(": OK") == len(every) - 2  # all but the card and itself


@pytest.mark.slow
def test_a_build_made_before_canaries_gains_one_at_its_first_export_kept(tmp_path: Path) -> None:
    from tests.support.build_pool import admitted_build, build

    made, first = admitted_build(tmp_path, drop_canary=True)
    guid = store.settings_of(made.path)["canary"]
    second = tmp_path / "again"
    done = build("export", str(made.path), "--out", str(second))
    assert f"each file holding the canary GUID {guid}" in done.stdout
    assert store.settings_of(made.path)["canary"] == guid
    for out in (first, second):
        assert holds(out / "README.md", guid)
