"""Worker processes that never outlive the command that started them, however it ends, and
a command that SIGTERM or Ctrl-C stops as an error would: its pending work cancelled, its
workers ended, one line said.

A job only ever adds to the media cache by renaming a finished entry into place
(`cache_entries`), so a worker killed at any moment leaves nothing a rerun would take as
prepared; the rerun prepares what is missing."""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from multiprocessing.context import BaseContext
from types import FrameType
from typing import TypeVar

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
_WATCH_SECONDS = 0.5
_REAP_SECONDS = 5.0
_CHECK_SECONDS = 0.2
T = TypeVar("T")

# The signal that stopped the command. Raising Stopped from the handler may go nowhere: a
# signal landing in a callback whose exceptions Python only prints (logging's, around the
# fork of a worker) would be lost, so waits check this too.
_stopped_by: int | None = None


class Stopped(BaseException):
    """SIGINT (Ctrl-C) or SIGTERM reached the command. A BaseException, as KeyboardInterrupt
    is, so that no `except Exception` on the way takes it for a failure of one job."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_status(self) -> int:
        return 128 + self.signum  # what a shell reports of a command this signal ended


@contextlib.contextmanager
def stopping_on_signals() -> Iterator[None]:
    """Inside, SIGINT and SIGTERM raise Stopped in this (the main) thread. A signal ignored
    on entry (a background job of a script) stays ignored; a second signal while
    stopping ends the command at once, as it would have without this."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may handle signals; the caller handles its own
        return
    owner = os.getpid()
    previous = {number: signal.getsignal(number) for number in STOP_SIGNALS}
    handled = [n for n, handler in previous.items() if handler not in (signal.SIG_IGN, None)]

    def stop(signum: int, frame: FrameType | None) -> None:
        global _stopped_by
        # A worker forked before its initializer ran still has this handler: the command,
        # not the worker, decides what a signal does.
        if os.getpid() != owner:
            return
        _stopped_by = signum
        for number in handled:
            signal.signal(number, signal.SIG_DFL)
        raise Stopped(signum)

    for number in handled:
        signal.signal(number, stop)
    try:
        yield
    finally:
        stopped = _stopped_by
        _forget_stop()
        for number in handled:
            signal.signal(number, previous[number])
    # A signal whose raise went nowhere after the last wait (while the pool shut down)
    # still stops the command.
    if stopped is not None:
        raise Stopped(stopped)


def completed(futures: Iterable[Future[T]]) -> Iterator[Future[T]]:
    """The futures as they complete (as `as_completed`), raising Stopped once a signal
    stopped the command, even where the handler's own raise went nowhere.

    Each future reports itself once to a queue, so the waiting costs a step a future.
    Waiting on the whole pending set again after each completion cost the set's size every
    time: at a 10,000-item pool, a minute of `build new` spent waiting."""
    finished: queue.SimpleQueue[Future[T]] = queue.SimpleQueue()
    expected = 0
    for future in futures:
        future.add_done_callback(finished.put)
        expected += 1
    for _ in range(expected):
        yield _next_finished(finished)


def _next_finished(finished: queue.SimpleQueue[Future[T]]) -> Future[T]:
    while True:
        if _stopped_by is not None:
            raise Stopped(_stopped_by)
        with contextlib.suppress(queue.Empty):
            return finished.get(timeout=_CHECK_SECONDS)


def _forget_stop() -> None:
    global _stopped_by
    _stopped_by = None


@contextlib.contextmanager
def worker_pool(
    workers: int, initializer: Callable[[], None], fresh: bool = False
) -> Iterator[ProcessPoolExecutor]:
    """A process pool whose workers die with this process; on any exception or Stopped
    inside, its pending jobs are cancelled and its workers killed before it propagates.
    `fresh`: each job in a new process started from scratch (spawn), for jobs that run an
    event loop and threads of their own, which a fork of this process would inherit."""
    pool = ProcessPoolExecutor(
        max_workers=max(1, workers),
        mp_context=multiprocessing.get_context("spawn") if fresh else _start_method(),
        initializer=_start_worker,
        initargs=(os.getpid(), initializer),
        max_tasks_per_child=1 if fresh else None,
    )
    try:
        yield pool
    except BaseException:
        kill_workers(pool)
        raise
    pool.shutdown()


def _start_method() -> BaseContext:
    """Python's default way to start workers (fork on Linux before Python 3.14), spawn in
    place of a forkserver (Linux from 3.14): a forkserver's workers are its children, not
    the command's, and each holds the pipe that keeps it alive, so after a SIGKILL of the
    command the forkserver and its workers would keep each other alive forever."""
    default = multiprocessing.get_context()
    if default.get_start_method() == "forkserver":
        return multiprocessing.get_context("spawn")
    return default


def kill_workers(pool: ProcessPoolExecutor) -> None:
    """Cancel the pool's pending jobs and kill its workers now, reaping them (Python 3.14's
    `ProcessPoolExecutor.kill_workers`, which older versions lack)."""
    # shutdown forgets the processes, so they are taken first, and killed before it: a
    # running job may take minutes, and the pool's manager thread, which replaces a worker
    # that ended, must see the pool broken, not the list of workers gone.
    processes = list((pool._processes or {}).values())
    for process in processes:
        with contextlib.suppress(ValueError, ProcessLookupError):  # closed, or just ended
            process.kill()
    for process in processes:
        with contextlib.suppress(ValueError):
            process.join(_REAP_SECONDS)
    pool.shutdown(wait=True, cancel_futures=True)


def _start_worker(command: int, initializer: Callable[[], None]) -> None:
    _die_with(command)
    # Ctrl-C reaches the terminal's whole process group, a scheduler's SIGTERM often does
    # too: the command alone stops, and kills its workers itself.
    for number in STOP_SIGNALS:
        signal.signal(number, signal.SIG_IGN)
    initializer()


def _die_with(command: int) -> None:
    """End this worker whenever `command`, the process that made the pool, dies, even by
    SIGKILL (the OOM killer, a scheduler), which leaves it no chance to end its workers:
    left alone they would wait on the pool's pipe forever."""
    if not _killed_with_parent():
        _watch_parent(command)  # no kernel help (not Linux): noticed within a poll
    elif os.getppid() != command:
        os._exit(1)  # the command died before the signal was set up: nothing would send it


def _killed_with_parent() -> bool:
    """Ask Linux to SIGKILL this process when its parent, the command, exits. Linux sends it
    when the parent's *thread* that forked ends: the pool forks from the thread submitting
    jobs, the command's main thread, which lasts as long as the command does."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _watch_parent(command: int) -> None:
    def watch() -> None:
        while os.getppid() == command:
            time.sleep(_WATCH_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="hss-watch-parent", daemon=True).start()
