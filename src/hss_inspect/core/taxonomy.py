"""The HSS taxonomy: four domains, eleven subdomains, and the short labels of the paper's tables.

This is the only place these strings are written down.
"""

from __future__ import annotations

from dataclasses import dataclass

from hss_inspect.core.names import aside


@dataclass(frozen=True)
class Subdomain:
    name: str
    label: str


@dataclass(frozen=True)
class Domain:
    name: str
    label: str
    subdomains: tuple[Subdomain, ...]


DOMAINS: tuple[Domain, ...] = (
    Domain(
        "Temporal & Causal Dynamics",
        "temporal",
        (
            Subdomain("Retrodiction", "retrodiction"),
            Subdomain("Mechanistic Causality", "mechanistic_causality"),
            Subdomain("Extrapolation", "extrapolation"),
        ),
    ),
    Domain(
        "Physical & Spatial Logic",
        "physical",
        (
            Subdomain("Hidden & Invisible", "hidden_invisible"),
            Subdomain("Affordance & Feasibility", "affordance_feasibility"),
            Subdomain('Spatial "Alien Viewpoint"', "alien_viewpoint"),
            Subdomain("Spatial Reachability", "spatial_reachability"),
        ),
    ),
    Domain(
        "Social Understanding",
        "social",
        (
            Subdomain("Theory of Mind", "theory_of_mind"),
            Subdomain("Social Role, Norm & Power Dynamics", "social_role_norm_power"),
        ),
    ),
    Domain(
        "Abstract & Contextual Inference",
        "abstract",
        (
            Subdomain("Change & Consequence", "change_consequence"),
            Subdomain("Patterns & Pareidolia", "patterns_pareidolia"),
        ),
    ),
)

MEDIA_TYPES: tuple[str, ...] = ("image", "video")

DOMAIN_BY_NAME = {d.name: d for d in DOMAINS}
SUBDOMAIN_BY_NAME = {s.name: s for d in DOMAINS for s in d.subdomains}
SUBDOMAIN_BY_LABEL = {s.label: s for d in DOMAINS for s in d.subdomains}
PARENT_OF_SUBDOMAIN = {s.name: d.name for d in DOMAINS for s in d.subdomains}


def domain_label(name: str) -> str:
    """Short label of a domain name; unknown names fall back to themselves."""
    domain = DOMAIN_BY_NAME.get(name)
    return domain.label if domain else name


def subdomain_label(name: str) -> str:
    """Short label of a subdomain name; unknown names fall back to themselves."""
    sub = SUBDOMAIN_BY_NAME.get(name)
    return sub.label if sub else name


def resolve_domain(value: str) -> str:
    """Full domain name for a full name or a short label (case-insensitive)."""
    for domain in DOMAINS:
        if value.strip().lower() in (domain.name.lower(), domain.label):
            return domain.name
    known = ", ".join(f"{d.label} ({d.name})" for d in DOMAINS)
    hint = aside(value.strip(), [d.label for d in DOMAINS], "'{}'")
    raise ValueError(f"unknown domain {value!r}{hint}: use one of {known}")


def resolve_subdomain(value: str) -> str:
    """Full subdomain name for a full name or a short label (case-insensitive)."""
    wanted = value.strip().lower()
    for sub in SUBDOMAIN_BY_NAME.values():
        if wanted in (sub.name.lower(), sub.label):
            return sub.name
    known = ", ".join(sorted(SUBDOMAIN_BY_LABEL))
    hint = aside(value.strip(), [*SUBDOMAIN_BY_LABEL, *SUBDOMAIN_BY_NAME], "'{}'")
    raise ValueError(f"unknown subdomain {value!r}{hint}: use a full name or one of {known}")


def resolve_subdomains(values: list[str]) -> set[str]:
    """Full subdomain names for a list option's values. A full name holding a comma
    (`Social Role, Norm & Power Dynamics`) reaches a list option split at its comma, so
    neighbouring values that together make a full name are read as that name."""
    resolved: set[str] = set()
    start = 0
    while start < len(values):
        end = next(
            (e for e in range(len(values), start + 1, -1) if _is_subdomain(values[start:e])),
            start + 1,
        )
        resolved.add(resolve_subdomain(", ".join(values[start:end])))
        start = end
    return resolved


def _is_subdomain(parts: list[str]) -> bool:
    return ", ".join(parts).strip().lower() in {s.lower() for s in SUBDOMAIN_BY_NAME}
