"""Anything that changes results changes the task version: the fingerprints of the judge
prompt, media notes, blind system message, sampling defaults, the token fit (image-token
rules, fitting constants), scoring and the judge audit's texts and kinds are pinned per
comparability version N (of eval.yaml's `N-X`)."""

from __future__ import annotations

import re
from pathlib import Path

from hss_inspect.versioning import comparability_version, result_fingerprints, task_version

README = Path(__file__).resolve().parents[1] / "README.md"

# To change any of these: bump N in src/hss_inspect/eval.yaml, add a Changelog entry to the
# README, and record the new fingerprints here under the new N (keep the old rows).
PINNED: dict[int, dict[str, str]] = {
    1: {
        "judge_prompt": "2e65b498f70129f8f8adbfbe0aa0907e2817ac721f59229aec49a5943ded2e22",
        "media_notes": "7f83387238903c3bacd265f9a996054c88d29d4554ec431690f9c2efd542e1af",
        "blind_system_message": "e4cbe94af46e082f74bfa10998a81f8c73102ded85380db5e548776ada8d2bde",
        "sampling_defaults": "796d6581f92842e1b87c2454eab78d41784b3201b81b55cb46de93eeb4494ba4",
        "scoring": "054bfda45ab68a6610f1ecb9d7700b40bcb75d5c584c77af2b0c1612e3647cd9",
        "judge_audit": "83480d02afe1a89e2de58654efcd9550d2a5f06a5c3ccdae14628494e7e53fde",
    },
    # 2: frames fitted to the model's token budget; the thinned note says "input limits"
    2: {
        "judge_prompt": "2e65b498f70129f8f8adbfbe0aa0907e2817ac721f59229aec49a5943ded2e22",
        "media_notes": "c97d17d13f4689782bf53e8247d194f4462098392705a6241b993d3893752cfd",
        "blind_system_message": "e4cbe94af46e082f74bfa10998a81f8c73102ded85380db5e548776ada8d2bde",
        "sampling_defaults": "c79eab0800c1e77cbc6baaf84a172e06e570955b0ca2d8348c53c495e7f45b4b",
        "token_fit": "f29af7ca2211b7a7b66beb6955141f8cd56409e13073b5b170ff7d494a0a695b",
        "scoring": "054bfda45ab68a6610f1ecb9d7700b40bcb75d5c584c77af2b0c1612e3647cd9",
        "judge_audit": "83480d02afe1a89e2de58654efcd9550d2a5f06a5c3ccdae14628494e7e53fde",
    },
}


def test_version_is_register_style() -> None:
    assert re.fullmatch(r"[1-9][0-9]*-[A-Z]+", task_version())
    assert comparability_version() == int(task_version().split("-")[0])


def test_results_inputs_unchanged_since_the_version_was_set() -> None:
    version = comparability_version()
    assert version in PINNED, f"record the fingerprints of version {version} in PINNED"
    changed = {
        name: digest
        for name, digest in result_fingerprints().items()
        if PINNED[version].get(name) != digest
    }
    assert not changed, (
        f"{', '.join(changed)} changed without a version bump: raise N in eval.yaml, add a "
        f"README Changelog entry and pin the new fingerprints {changed}"
    )


def test_readme_changelog_names_the_current_version() -> None:
    changelog = README.read_text(encoding="utf-8").split("## Changelog", 1)
    assert len(changelog) == 2, "the README needs a Changelog section"
    assert f"### {task_version()}" in changelog[1]
