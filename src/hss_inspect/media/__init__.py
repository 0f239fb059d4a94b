"""Frames and images: the sampling plan, decoding with PyAV, images, the disk cache, and
the async service the solvers call.

- `service`: media for a running eval, off the event loop, once per clip and settings.
- `prepare`: media prepared ahead of a run, one job per file, in worker processes.
- `fingerprint`: what an image or clip looks like, for near-duplicates, kept in the cache.
- `workers`: worker processes that never outlive the command, and its stop on SIGTERM or
  Ctrl-C.
- `frame_cache`: a clip's frames through the cache (a thinned set from the whole one).
- `image_cache`: images as sent, through the cache.
- `facts`: what a media file is (its hash, a clip's duration and size), kept once.
- `frame_files`: a frames entry's files on disk.
- `cache_entries`: entry keys, atomic writes and locks shared between processes.
- `cache_folder`: the cache's folder, whether it can be used, its size.
- `activity`: the counts of what preparing media cost this process.
- `video`: decoding a clip into the frames of its plan.
- `image`: images untouched within the limits, else re-encoded.
- `probe`: what a clip is, read without decoding it (duration, size, packet index).
- `alignment`: whether a picture is another or a part of it, checked at a finer scale, pure.
- `plan`: the frame sampling plan, pure.
- `perceptual`: perceptual hashes of pictures, their crops and turns, and distances, pure.
- `uri`: media as inline `data:` URIs.
- `errors`: the errors media preparation raises, and its time limit.
"""
