"""A process that fills the frame cache for one clip, recording each real decode.

Usage: python cache_child.py CLIP DECODE_LOG. Prints the sha256 of the frames it got.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
from pathlib import Path
from typing import Any

from hss_inspect.core.settings import FrameSettings
from hss_inspect.media import frame_cache
from hss_inspect.media.video import SampledVideo

clip, decode_log = Path(sys.argv[1]), Path(sys.argv[2])
real_sample_video_sweep = frame_cache.sample_video_sweep


def recording_sample_video_sweep(path: Path, *args: Any) -> list[SampledVideo]:
    with decode_log.open("a") as log:
        log.write(f"{os.getpid()}\n")
    time.sleep(0.5)  # widen the window in which a second process could start decoding too
    return real_sample_video_sweep(path, *args)


frame_cache.sample_video_sweep = recording_sample_video_sweep
video = frame_cache.cached_sample_video(clip, FrameSettings())
print(hashlib.sha256(b"".join(video.jpegs)).hexdigest())
