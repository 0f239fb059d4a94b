"""Local stand-ins started by the tests: the scripted model server and an olah hub."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

HERE = Path(__file__).parent
ROOT = HERE.parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for(check: callable, what: str, timeout: float = 30.0) -> None:  # type: ignore[valid-type]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise RuntimeError(f"{what} did not start within {timeout} s")


def stand_in_module(script: str) -> str:
    """Stand-ins run as modules of this package, so they share tests/support/stand_in.py."""
    return f"tests.support.{Path(script).stem}"


@contextmanager
def scripted_models(
    workdir: Path, script: str = "scripted_server.py", log_requests: bool = True
) -> Iterator[tuple[str, Path]]:
    """Start a scripted OpenAI-compatible server; yields (base_url, request log).

    `log_requests=False` discards the request bodies (hundreds of MB for big clips).
    """
    workdir.mkdir(parents=True, exist_ok=True)
    port_file = workdir / "port"
    log_file = workdir / "requests.jsonl" if log_requests else Path(os.devnull)
    log_file.touch()
    process = subprocess.Popen(
        [sys.executable, "-m", stand_in_module(script), str(port_file), str(log_file)], cwd=ROOT
    )
    try:
        _wait_for(lambda: port_file.exists() and port_file.read_text(), "scripted server")
        yield f"http://127.0.0.1:{port_file.read_text()}/v1", log_file
    finally:
        process.terminate()
        process.wait(timeout=10)


def git_commit_all(repo: Path, message: str) -> str:
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-c", "user.email=tests@hss", "-c", "user.name=tests", *args],
            cwd=repo,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()

    if not (repo / ".git").exists():
        git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-qm", message)
    return git("rev-parse", "HEAD")


@contextmanager
def olah_hub(mirrors: Path, workdir: Path) -> Iterator[str]:
    """Serve the git repos under `mirrors/datasets/<org>/<name>` as an offline hub."""
    port = free_port()
    config = workdir / "olah.toml"
    config.write_text(
        "[basic]\n"
        f'host = "127.0.0.1"\nport = {port}\n'
        f'mirror-netloc = "127.0.0.1:{port}"\nmirror-lfs-netloc = "127.0.0.1:{port}"\n'
        f'repos-path = "{workdir / "olah-repos"}"\nmirrors-path = ["{mirrors}"]\n'
        "[accessibility]\noffline = true\n"
    )
    olah = Path(sys.executable).with_name("olah-cli")
    log = (workdir / "olah.log").open("w")
    process = subprocess.Popen(
        [str(olah), "-c", str(config), "--log-path", str(workdir / "olah-logs")],
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=workdir,
    )
    endpoint = f"http://127.0.0.1:{port}"

    def up() -> bool:
        try:
            return httpx.get(endpoint + "/api/datasets/none/none", timeout=1).status_code > 0
        except httpx.HTTPError:
            return False

    try:
        _wait_for(up, "olah")
        yield endpoint
    finally:
        process.terminate()
        process.wait(timeout=10)
        log.close()


@contextmanager
def provider_stand_in(
    workdir: Path,
    rules: dict[str, object],
    script: str = "provider_server.py",
    prefix: tuple[str, ...] = (),
) -> Iterator[tuple[str, Path]]:
    """Start the provider stand-in (or another `script` taking the same arguments) enforcing
    `rules`; yields (root URL, request log). `prefix` runs it under another program (e.g.
    `faketime -f "+0 x60"`, for a clock 60 times as fast)."""
    import json

    workdir.mkdir(parents=True, exist_ok=True)
    config, port_file, log_file = workdir / "rules.json", workdir / "port", workdir / "wire.jsonl"
    config.write_text(json.dumps(rules))
    log_file.touch()
    process = subprocess.Popen(
        [
            *prefix,
            sys.executable,
            "-m",
            stand_in_module(script),
            str(config),
            str(port_file),
            str(log_file),
        ],
        cwd=ROOT,
        start_new_session=True,  # a prefix program's child is stopped with it
    )
    try:
        _wait_for(lambda: port_file.exists() and port_file.read_text(), "provider stand-in")
        yield f"http://127.0.0.1:{port_file.read_text()}", log_file
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=10)


@contextmanager
def served_viewer_bundle(log_dir: Path, bundle: Path) -> Iterator[str]:
    """`inspect view bundle` of `log_dir`, served over plain HTTP; yields its URL."""
    import functools
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    inspect = str(Path(sys.executable).with_name("inspect"))
    subprocess.run(
        [inspect, "view", "bundle", "--log-dir", str(log_dir), "--output-dir", str(bundle)],
        check=True,
        capture_output=True,
    )
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(bundle))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
