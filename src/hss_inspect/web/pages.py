"""The pages' shared parts, rendered on the server (no build step, a few lines of inline
script): the HTML shell and its style, the media of a task (an image fitted to the window
and zoomed with a click, a clip in the browser's player, or the frames and labels a model
is sent) and the not-found page. Everything a person typed is escaped by the caller with
`escape`."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING
from urllib.parse import quote

if TYPE_CHECKING:  # the media module loads Inspect: not for a command that shows no page
    from hss_inspect.web.media import ShownFrames

__all__ = ["ONCE", "escape", "media_html", "not_found_page", "page"]

_STYLE = """
body{font:16px/1.5 system-ui,sans-serif;max-width:72rem;margin:1rem auto;padding:0 1rem}
header{display:flex;justify-content:space-between;color:#555}
.media{margin:1rem 0;overflow:auto;max-height:85vh;border:1px solid #ddd}
.media img.fit{max-width:100%;max-height:80vh;cursor:zoom-in;display:block}
.media img.full{cursor:zoom-out}
.media video{max-width:100%;max-height:80vh;display:block}
video.silent::-webkit-media-controls-mute-button,
video.silent::-webkit-media-controls-volume-slider{display:none}
.frames{display:grid;grid-template-columns:repeat(auto-fill,minmax(14rem,1fr));gap:.5rem}
.frames figure{margin:0}.frames img{width:100%}.note{color:#333}
textarea{width:100%;min-height:8rem;font:inherit}
.error{color:#a00;font-weight:600}
"""
_ZOOM = (
    "onclick=\"this.classList.toggle('fit');this.classList.toggle('full')\" "
    'title="Click to see the image at full size, and again to fit it to the window"'
)
# Disables the form's buttons once it is sent, so a double click sends it once; after the
# form's data are taken, so the button pressed is still sent with them.
ONCE = "onsubmit=\"setTimeout(()=>this.querySelectorAll('button').forEach(b=>b.disabled=true))\""


def page(title: str, body: str, style: str = "") -> str:
    """A whole page: `body` is HTML already escaped; `style` adds to the shared style."""
    return (
        f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{escape(title)}</title>"
        f'<meta name=viewport content="width=device-width"><style>{_STYLE}{style}</style>'
        f"</head><body>{body}</body></html>"
    )


def media_html(base: str, key: str, media_type: str, frames: ShownFrames | None) -> str:
    """The media addressed as `{base}/media/{key}` (and `{base}/frames/{n}/{key}`)."""
    path = escape(quote(key, safe=""))
    if frames is not None:
        figures = "".join(
            f"<figure><figcaption>{escape(label)}</figcaption>"
            f'<img loading=lazy src="{base}/frames/{n}/{path}" alt="{escape(label)}">'
            "</figure>"
            for n, label in enumerate(frames.labels)
        )
        return f"<p class=note>{escape(frames.note)}</p><div class='media frames'>{figures}</div>"
    source = f"{base}/media/{path}"
    if media_type == "image":
        return f'<div class=media><img class=fit src="{source}" alt="the image" {_ZOOM}></div>'
    # served without its audio track: muted, and the player shows no volume control
    return (
        "<div class=media><video class=silent controls muted preload=auto "
        f'controlslist="nodownload noremoteplayback" src="{source}"></video></div>'
    )


def not_found_page() -> str:
    return page("Not found", "<h2>Not found</h2>")
