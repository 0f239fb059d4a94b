"""Fetching files of a hub dataset, with failures a person can act on.

`hf_hub_download` retries a network failure with backoff for about 25 s before it gives
up, then raises a long error that never names a remedy. Before the first download of a
run, one HEAD request without retries tells the cases apart: the hub out of reach, a
dataset id or revision that does not exist, a gated dataset or a refused token. Offline
mode (`HF_HUB_OFFLINE=1`) sends nothing and only reads the local cache.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Sequence
from pathlib import Path

from hss_inspect.core.errors import SetupError
from hss_inspect.core.options import spell

logger = logging.getLogger(__name__)

TOKEN_PAGE = "https://huggingface.co/settings/tokens"


class HubError(SetupError):
    """A dataset on the hub that cannot be read; the message names it and the remedy."""


# What marks a file's git blob id among content ids (others are sha256 digests).
GIT_ID = "git-"
# Paths listed a request when asking the hub for its files' hashes: a request stays small
# whatever the release's size.
PATHS_A_REQUEST = 500
# Endpoints found out of reach in this process: later downloads read the cache only,
# instead of each spending the hub client's ~25 s of retries.
_unreachable: set[str] = set()


def download(repo_id: str, filename: str, revision: str) -> Path:
    """`filename` of dataset `repo_id` at `revision`, from the cache or the hub."""
    from huggingface_hub import hf_hub_download

    return Path(
        hf_hub_download(
            repo_id,
            filename,
            repo_type="dataset",
            revision=revision,
            local_files_only=hub_endpoint() in _unreachable,
        )
    )


def download_checked(repo_id: str, filename: str, revision: str) -> Path:
    """Like `download`, but any failure is a `HubError` saying what to do, raised fast."""
    from huggingface_hub import constants

    if constants.is_offline_mode():
        found = cached(repo_id, filename, revision)
        if found is None:
            raise HubError(offline_message(repo_id, revision))
        return found
    try:
        _probe(repo_id, filename, revision)
    except Exception as exc:
        if not _is_network_failure(exc):
            raise HubError(explain(exc, repo_id, revision, filename)) from None
        found = cached(repo_id, filename, revision)
        if found is None:
            raise HubError(unreachable_message(repo_id, revision, exc)) from None
        _unreachable.add(hub_endpoint())
        logger.warning(
            "%s@%s: the hub at %s is out of reach (%s); using the copy in the local cache, "
            "and media files not in the cache will fail",
            repo_id,
            revision,
            hub_endpoint(),
            _reason(exc),
        )
        return found
    try:
        return download(repo_id, filename, revision)
    except Exception as exc:
        raise HubError(explain(exc, repo_id, revision, filename)) from None


def hub_endpoint() -> str:
    from huggingface_hub import constants

    return str(constants.ENDPOINT)


def _probe(repo_id: str, filename: str, revision: str) -> None:
    """One HEAD request, no retries: raises the hub's own error for this file."""
    from huggingface_hub import get_hf_file_metadata, hf_hub_url

    url = hf_hub_url(repo_id, filename, repo_type="dataset", revision=revision)
    # Older huggingface_hub releases lack the argument.
    if "retry_on_errors" in inspect.signature(get_hf_file_metadata).parameters:
        get_hf_file_metadata(url, retry_on_errors=False)
    else:
        get_hf_file_metadata(url)


def content_ids(repo_id: str, paths: Sequence[str], revision: str) -> dict[str, str] | None:
    """What the hub says of each file's content, from a listing of the paths (500 a request)
    and no download: the sha256 of a file it keeps in LFS, else `git-` and the git blob id of
    a file it keeps in git. None when the hub cannot be asked (offline, out of reach, or an
    error): the caller falls back to the files in the cache."""
    from huggingface_hub import HfApi, constants

    if not paths or constants.is_offline_mode() or hub_endpoint() in _unreachable:
        return None
    try:
        api = HfApi()
        chunks = [
            list(paths[n : n + PATHS_A_REQUEST]) for n in range(0, len(paths), PATHS_A_REQUEST)
        ]
        listed = [
            info
            for chunk in chunks
            for info in api.get_paths_info(repo_id, chunk, revision=revision, repo_type="dataset")
        ]
    except Exception as exc:
        logger.warning(
            "%s@%s: the hub did not list the media files (%s); the media of tasks not in the "
            "local cache are left unfingerprinted",
            repo_id,
            revision,
            _reason(exc),
        )
        return None
    from huggingface_hub.hf_api import RepoFile

    files = [info for info in listed if isinstance(info, RepoFile)]
    return {
        info.path: info.lfs.sha256 if info.lfs is not None else GIT_ID + info.blob_id
        for info in files
    }


def cached(repo_id: str, filename: str, revision: str) -> Path | None:
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        return Path(
            hf_hub_download(
                repo_id, filename, repo_type="dataset", revision=revision, local_files_only=True
            )
        )
    except LocalEntryNotFoundError:
        return None


def _is_network_failure(exc: BaseException) -> bool:
    from huggingface_hub.errors import HfHubHTTPError

    if isinstance(exc, HfHubHTTPError):
        return False
    # The hub client raises its HTTP library's transport errors (refused, DNS, timeout)
    # as they are; they all derive from OSError or carry "Connect"/"Timeout" in the name.
    name = type(exc).__name__
    return isinstance(exc, (OSError, TimeoutError)) or "Connect" in name or "Timeout" in name


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _status(exc: BaseException) -> int | None:
    response = getattr(exc, "response", None)
    return getattr(response, "status_code", None)


def _token_set() -> bool:
    from huggingface_hub import get_token

    return get_token() is not None


def local_copy() -> str:
    return f"or use a local copy with {spell('dataset', 'DIR')}"


def explain(exc: BaseException, repo_id: str, revision: str, filename: str) -> str:
    """One short message for an error the hub client raised about `repo_id`@`revision`."""
    from huggingface_hub.errors import (
        GatedRepoError,
        RemoteEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    where = f"dataset {repo_id}@{revision}"
    if isinstance(exc, GatedRepoError):
        if _token_set():
            return (
                f"{where}: the dataset is gated and the account of HF_TOKEN has not been "
                f"granted access; accept its conditions at {hub_endpoint()}/datasets/"
                f"{repo_id} with that account, {local_copy()}"
            )
        return (
            f"{where}: the dataset is gated; accept its conditions at {hub_endpoint()}/"
            f"datasets/{repo_id} and set HF_TOKEN to a token of that account "
            f"({TOKEN_PAGE}), {local_copy()}"
        )
    if isinstance(exc, RevisionNotFoundError):
        return revision_message(repo_id, revision, _refs(repo_id))
    if isinstance(exc, RepositoryNotFoundError):
        # Some hubs (mirrors such as olah) report an unknown revision as an unknown repo.
        refs = _refs(repo_id)
        if refs is not None:
            return revision_message(repo_id, revision, refs)
        return (
            f"{where}: no such dataset on the hub at {hub_endpoint()} (or it is private and "
            f"HF_TOKEN cannot see it); check the id in {spell('dataset')}, set HF_TOKEN for a "
            f"private dataset, {local_copy()}"
        )
    if isinstance(exc, RemoteEntryNotFoundError):
        return f"{where} has no {filename}: it is not an HSS release; check -T dataset="
    status = _status(exc)
    if status == 401:
        return (
            f"{where}: the hub refused HF_TOKEN (invalid or expired); set HF_TOKEN to a "
            f"valid token ({TOKEN_PAGE}), unset it for a public dataset, {local_copy()}"
        )
    if status == 403:
        return (
            f"{where}: HF_TOKEN lacks read permission for this dataset; give it read access "
            f"({TOKEN_PAGE}), {local_copy()}"
        )
    if _is_network_failure(exc):
        return unreachable_message(repo_id, revision, exc)
    return f"{where}: the hub at {hub_endpoint()} answered {_reason(exc)}; try again later"


def revision_message(repo_id: str, revision: str, refs: list[str] | None) -> str:
    known = f" ({', '.join(refs)}, or a commit id)" if refs else ", e.g. main"
    return (
        f"dataset {repo_id}: revision {revision!r} does not exist (no such branch, tag or "
        f"commit); give an existing one with -T revision={known}"
    )


def unreachable_message(repo_id: str, revision: str, exc: BaseException) -> str:
    return (
        f"dataset {repo_id}@{revision}: cannot reach the Hugging Face hub at "
        f"{hub_endpoint()} ({_reason(exc)}) and it is not in the local cache; check the "
        f"network or HF_ENDPOINT, {local_copy()}, or run `hss-inspect prepare --dataset "
        f"{repo_id} --revision {revision}` once online and then use HF_HUB_OFFLINE=1"
    )


def offline_message(repo_id: str, revision: str) -> str:
    from huggingface_hub import constants

    return (
        f"dataset {repo_id}@{revision} is not in the local Hugging Face cache "
        f"({constants.HF_HUB_CACHE}) and HF_HUB_OFFLINE=1 forbids downloading it; run "
        f"`hss-inspect prepare --dataset {repo_id} --revision {revision}` once online, "
        f"{local_copy()}"
    )


def _refs(repo_id: str) -> list[str] | None:
    """The dataset's branch and tag names, or None when the dataset does not answer."""
    from huggingface_hub import HfApi

    try:
        refs = HfApi().list_repo_refs(repo_id, repo_type="dataset")
    except Exception:
        return None
    return [ref.name for ref in [*refs.branches, *refs.tags]]
