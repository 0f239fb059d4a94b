"""A model name is checked the same way wherever a command takes one: a name Inspect's
model database or Table 5 knows passes, a slip of one is refused naming it, a name close to
none is a model they do not know. The database's names are read through a private name of
Inspect, pinned here."""

from __future__ import annotations

import pytest

from hss_inspect.core.errors import InputError
from hss_inspect.providers import model_names
from hss_inspect.providers.model_names import check_model_name
from hss_inspect.providers.paper_models import deployments, judges

pytestmark = pytest.mark.inspect_api


def test_inspect_still_lists_its_database_where_we_read_it() -> None:
    from inspect_ai.model import get_model_info

    names = model_names.inspect_database_names()
    assert "openai/gpt-6-astra" in names and "anthropic/claude-opus-5" in names
    # each is a name Inspect's own lookup knows, with the entry the database gives it
    for name in ("openai/gpt-6-astra", "anthropic/claude-opus-5", "google/gemini-3.5-flash"):
        info = get_model_info(name)
        assert info is not None and info.model, name


@pytest.mark.parametrize(
    "name",
    [
        "openai/gpt-6-astra",
        "anthropic/claude-opus-5",
        "ANTHROPIC/Claude-Opus-5",  # Inspect's lookup ignores case
        "openai/azure/gpt-6-astra",  # and a service in the middle
        *(d.inspect_model for d in deployments() + judges()),
    ],
)
def test_a_name_inspect_or_table_5_knows_passes(name: str) -> None:
    assert check_model_name(name, "--model") is True


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("openai/gpt-6-astr", "openai/gpt-6-astra"),  # a letter dropped
        ("openai/gpt6-astra", "openai/gpt-6-astra"),  # a dash dropped
        ("anthropic/claude-opsu-5", "anthropic/claude-opus-5"),  # letters swapped
        ("google/vertex/gemini-3.5-flsh", "google/vertex/gemini-3.5-flash"),  # as typed
        ("GPT-6-astra", "openai/gpt-6-astra"),  # Table 5's name, no provider
        ("openai-api/meta_ai/muse-sprak-1.3", "openai-api/meta_ai/muse-spark-1.3"),
    ],
)
def test_a_slip_of_a_known_name_is_refused_naming_it(typed: str, meant: str) -> None:
    with pytest.raises(InputError) as refused:
        check_model_name(typed, "--model")
    said = str(refused.value)
    assert said.startswith(f"{typed} is not a model") and "(--model)" in said
    assert f"did you mean {meant}?" in said


@pytest.mark.parametrize(
    "name",
    [
        "openai/my-own-fine-model",  # close to no OpenAI model
        "anthropic/claude-opus-5-6",  # another version: a newer model, not a slip
        "openai/ft:gpt-6-astra:my-lab::abc123",  # a fine-tune
        "openai-api/my-server/gpt-6-astr",  # a route no known name has
        "vllm/Qwen/Qwen2.5-VL-7B-Instruct",
        "hss/scripted",
        "none",
    ],
)
def test_a_name_close_to_none_is_a_model_they_do_not_know(name: str) -> None:
    assert check_model_name(name, "--model") is False


def test_a_name_the_price_file_gives_is_known() -> None:
    assert check_model_name("openai/gpt-6-astr", "--model", also_known=["openai/gpt-6-astr"])


def test_the_database_names_are_read_once_an_inspect_version(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    read: list[int] = []
    names: list[str] = model_names.inspect_database_names()

    def counted() -> list[str]:
        read.append(1)
        return names

    monkeypatch.setattr(model_names, "inspect_database_names", counted)
    assert model_names.database_names() == names and len(read) == 1
    assert model_names.database_names() == names and len(read) == 1  # from the cache folder
    monkeypatch.setattr(model_names, "version", lambda _: "0.3.999")
    assert model_names.database_names() == names and len(read) == 2  # another Inspect


def test_the_scripted_provider_has_one_model_and_any_other_of_its_names_is_refused() -> None:
    assert check_model_name("hss/scripted", "--model") is False  # passes, priced as unknown
    for name in ("hss/scriptd", "hss/scripteed", "hss/gpt-4o"):
        with pytest.raises(InputError, match=rf"^{name} is not a model of the hss provider"):
            check_model_name(name, "--model-role grader")
