"""What the people-facing rooms share (the human study, `human/`, and the construction of
tasks, `construction/`): private links, a store that loses nothing it acknowledged, the
media as people see them, the pages' chrome and the server around them. Each room builds
its own routes and pages on these; neither copies the other's.

- `server`: the response headers, work off the event loop, media and frame responses, the
  not-found page's handler, and starting the server (uvicorn).
- `answers`: a person's own answer (study or blind review): its record, limit, form fields.
- `pages`: the HTML shell and style, the zoomable image, the clip, the frames grid, a
  not-found page; everything typed is escaped.
- `media`: an image as it is, a clip without its audio track, or the frames and time labels
  a model is sent, kept in memory up to a bound.
- `tokens`: each link's random token, and finding a token's holder in constant time.
- `store`: one SQLite file a store: each write one transaction, committed (WAL,
  synchronous FULL) before the server answers.
"""
