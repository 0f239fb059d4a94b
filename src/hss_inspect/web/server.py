"""The server's parts every people-facing room uses (Starlette and uvicorn, from the
optional `web` extra): the headers of pages and media, work off the event loop, an image
or a clip (without its audio) or one frame of the frames view as a response, the 404 that
answers anything unknown with no data, and starting the server."""

from __future__ import annotations

import errno
import mimetypes
import re
import socket
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from hss_inspect.core.errors import InputError
from hss_inspect.web.pages import not_found_page

if TYPE_CHECKING:  # the media module loads Inspect (its frames' labels): not for the parser
    from hss_inspect.web.media import FrameStore

T = TypeVar("T")
# Where a server listens unless told otherwise: this machine only.
DEFAULT_HOST = "127.0.0.1"
# A page holds a form and private state: never kept or shared by a cache.
PAGE_HEADERS = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
}
MEDIA_HEADERS = {**PAGE_HEADERS, "Cache-Control": "private, max-age=86400"}


async def blocking(work: Callable[..., T], *args: Any) -> T:
    """SQLite and file work off the event loop, so one slow write stalls nobody else."""
    return await anyio.to_thread.run_sync(partial(work, *args))


def not_found() -> Any:
    """The exception that answers with the 404 page: nothing said of what exists."""
    from starlette.exceptions import HTTPException

    return HTTPException(404)


async def not_found_response(request: Any, exc: Exception) -> Any:
    """The handler of 404 and 405: the same page and no data, whatever was asked."""
    from starlette.responses import HTMLResponse

    return HTMLResponse(not_found_page(), status_code=404, headers=PAGE_HEADERS)


def token_app(prefix: str, server: object, routes: Sequence[tuple[str, str, str]]) -> Any:
    """A Starlette app of `routes` (method, path under `/{prefix}/{token}`, the name of the
    handler on `server`), where anything else, or any method not routed, gets the 404 page."""
    from starlette.applications import Starlette
    from starlette.routing import Route

    made = [
        Route(f"/{prefix}/{{token}}{path}", getattr(server, handler), methods=[method])
        for method, path, handler in routes
    ]
    return Starlette(
        routes=made, exception_handlers={404: not_found_response, 405: not_found_response}
    )


def html(body: str, status_code: int = 200) -> Any:
    from starlette.responses import HTMLResponse

    return HTMLResponse(body, status_code=status_code, headers=PAGE_HEADERS)


def redirect(url: str) -> Any:
    """After a form is stored: the page again by GET (303), so a reload sends nothing."""
    from starlette.responses import RedirectResponse

    return RedirectResponse(url, status_code=303)


async def media_response(path: Path, media_type: str) -> Any:
    """An image as it is; a clip without its audio track (made once, then kept)."""
    from starlette.responses import FileResponse

    from hss_inspect.web.media import silent_clip

    if media_type == "video":
        return FileResponse(await silent_clip(path), headers=MEDIA_HEADERS)
    kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    return FileResponse(path, media_type=kind, headers=MEDIA_HEADERS)


async def frame_response(frames: FrameStore | None, path: Path, index: int) -> Any:
    """Frame `index` of the frames view of the clip at `path` (404 past its frames)."""
    from starlette.responses import Response

    if frames is None:
        raise not_found()
    shown = await frames.frames(path)
    if not 0 <= index < len(shown.jpegs):
        raise not_found()
    return Response(shown.jpegs[index], media_type="image/jpeg", headers=MEDIA_HEADERS)


def check_installed(extra: str) -> None:
    """One line naming the extra to install when a package the pages need is missing (the
    packages of the extra, as the package's metadata lists them): checked before any link
    is handed out, as a missing python-multipart only shows when a form is sent (a 500,
    and what was typed is lost)."""
    missing = [name for name in extra_packages(extra) if not installed(name)]
    if missing:
        raise InputError(
            f"the pages need {', '.join(missing)}, not installed: "
            f'pip install "hss-inspect[{extra}]"'
        )


def extra_packages(extra: str) -> list[str]:
    """The distributions the package's optional extra `extra` requires."""
    from importlib.metadata import requires

    marker = re.compile(rf"""extra\s*==\s*["']{re.escape(extra)}["']""")
    found = []
    for requirement in requires("hss-inspect") or []:
        name, _, markers = requirement.partition(";")
        if marker.search(markers):
            found.append(re.split(r"[\s<>=!~\[;]", name.strip(), maxsplit=1)[0])
    return found


def installed(distribution: str) -> bool:
    from importlib.metadata import PackageNotFoundError, version

    try:
        version(distribution)
    except PackageNotFoundError:
        return False
    return True


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket listening at host:port, or one line naming --port: a port in use is found
    before anything says the server is up."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn sets it
    try:
        listener.bind((host, port))
    except OSError as exc:
        listener.close()
        if exc.errno == errno.EADDRINUSE:
            raise InputError(
                f"port {port} is in use at {host} (another server, or this one already "
                "running): choose another with --port"
            ) from None
        raise InputError(
            f"cannot listen at {host}:{port} ({exc.strerror}): check --host and --port"
        ) from None
    listener.listen(2048)  # uvicorn's backlog
    return listener


def run_server(app: Any, host: str, port: int, serving: str) -> None:
    """Serve `app` until stopped (Ctrl-C, or a signal); `serving` (the line with the
    address) is printed once the socket is listening."""
    import uvicorn

    listener = listening_socket(host, port)
    print(serving, flush=True)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning")
    uvicorn.Server(config).run(sockets=[listener])
