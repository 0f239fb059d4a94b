"""Frames and images: the sampling plan, decoding with PyAV, images, the disk cache, and the
async service the solvers call."""
