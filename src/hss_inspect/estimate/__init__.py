"""`hss-inspect estimate`, before anything is sent.

- `text`: the printed estimate.
- `requests`: each request as the task would build it: images, bytes, image tokens, the
  fit of frames to the context window, and what is already prepared.
- `costs`: the bill under each caching strategy, pure arithmetic over those requests, a
  pilot log or Table 1, and prices.
"""
