"""Anything that changes results changes the task version: the fingerprints of the judge
prompt, media notes, blind system message, sampling defaults, the token fit (image-token
rules, fitting constants), scoring, the judge audit's texts and kinds, the agentic
condition's inputs, the provider rules and the labeller's prompt and taxonomy are pinned
per comparability version N (of eval.yaml's `N-X`)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest

from hss_inspect import versioning
from hss_inspect.conditions.agentic import tools
from hss_inspect.providers import tokens as token_formulas
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
    # 2-B: policy refusals scored as zeros (a `refusal` key in each value), provider
    # errors fail the sample by default, frames fitted to the model's token budget (the
    # thinned note says "input limits"), and the agentic inputs, provider rules, token fit
    # and labeller are fingerprinted too.
    2: {
        "judge_prompt": "2e65b498f70129f8f8adbfbe0aa0907e2817ac721f59229aec49a5943ded2e22",
        "media_notes": "c97d17d13f4689782bf53e8247d194f4462098392705a6241b993d3893752cfd",
        "blind_system_message": "e4cbe94af46e082f74bfa10998a81f8c73102ded85380db5e548776ada8d2bde",
        "sampling_defaults": "c79eab0800c1e77cbc6baaf84a172e06e570955b0ca2d8348c53c495e7f45b4b",
        "token_fit": "64590446a558e7f68d81133100f671f4f7645c477f26d4e65de8aeb8580af265",
        "judge_audit": "83480d02afe1a89e2de58654efcd9550d2a5f06a5c3ccdae14628494e7e53fde",
        "scoring": "84689ac722b6c9737c0575e6281595965e21474c7113797266f290bde32fc802",
        "agentic": "b568baf1d9e9e32965d9bdcf265ddf913bf2b1b7399250bed89cd19464ac91ea",
        "provider_rules": "ecc6d8a99118af53d4ea36ddeaa650a5e098c7b3ff2342a40eb5bb8a2f2bf696",
        "labeler": "ae75c46cb6761415a1da592fee17859ad7f367751984cbfa98bc04f1fc494c8b",
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


def _changed_by(monkeypatch: pytest.MonkeyPatch, name: str, value: Any) -> set[str]:
    before = result_fingerprints()
    monkeypatch.setattr(versioning, name, value)
    after = result_fingerprints()
    monkeypatch.undo()
    return {key for key in before if before[key] != after[key]}


def test_the_agentic_inputs_provider_rules_and_labeller_are_fingerprinted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    agent = versioning.DEFAULT_AGENT
    # the crop tool's description names the zoom side: a tool text and a limit change
    zoomed = dataclasses.replace(agent, zoom_side=agent.zoom_side + 1)
    assert _changed_by(monkeypatch, "DEFAULT_AGENT", zoomed) == {"agentic"}
    fewer = dataclasses.replace(agent, max_steps=agent.max_steps - 1)
    assert _changed_by(monkeypatch, "DEFAULT_AGENT", fewer) == {"agentic"}
    worded = _changed_by(monkeypatch, "CONVERSATION_TEXT_BYTES", 1)
    assert worded == {"agentic"}
    before = result_fingerprints()
    monkeypatch.setattr(tools, "CROP_DESCRIPTION", tools.CROP_DESCRIPTION + " Crop well.")
    assert {k for k, v in result_fingerprints().items() if v != before[k]} == {"agentic"}
    # the image-token formulas' code, not only their constants, decides the frames sent
    formulas = dict(token_formulas.FORMULAS)
    formulas["qwen_smart_resize"] = lambda w, h, f: token_formulas.qwen_tokens(w, h, f) + 1
    monkeypatch.setattr(token_formulas, "FORMULAS", formulas)
    assert {k for k, v in result_fingerprints().items() if v != before[k]} == {
        "agentic",
        "token_fit",
    }

    rules = versioning.rules_file()
    first = dataclasses.replace(rules.providers[0], images_per_request=7)
    stricter = dataclasses.replace(rules, providers=(first, *rules.providers[1:]))
    assert _changed_by(monkeypatch, "rules_file", lambda: stricter) == {"provider_rules"}
    # a documentation link decides nothing a model is sent
    linked = dataclasses.replace(rules.providers[0], docs=("https://example.invalid",))
    relinked = dataclasses.replace(rules, providers=(linked, *rules.providers[1:]))
    assert _changed_by(monkeypatch, "rules_file", lambda: relinked) == set()

    causes = versioning.taxonomy()
    renamed = dataclasses.replace(causes.causes[0], definition="another definition")
    other = dataclasses.replace(causes, causes=(renamed, *causes.causes[1:]))
    assert _changed_by(monkeypatch, "taxonomy", lambda: other) == {"labeler"}
    assert _changed_by(monkeypatch, "DEFAULT_LABELER_RETRIES", 5) == {"labeler"}
