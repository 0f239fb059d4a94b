"""The HSS taxonomy: four domains, eleven subdomains, and the short labels of the paper's tables.

This is the only place these strings are written down. A build may hold a lab's own
taxonomy instead (`Taxonomy`, chosen at `build new --taxonomy`); the paper's is `PAPER`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

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


# ---- a taxonomy as a build holds it --------------------------------------------------------


@dataclass(frozen=True)
class Taxonomy:
    """Domains and their subdomains, each subdomain in one domain: the paper's (`PAPER`),
    or a lab's own, which a build stores and its authoring, import and export follow."""

    domains: tuple[Domain, ...]

    @property
    def domain_names(self) -> list[str]:
        return [d.name for d in self.domains]

    @property
    def subdomain_names(self) -> list[str]:
        return [s.name for d in self.domains for s in d.subdomains]

    def domain_of(self, subdomain: str) -> str:
        """The domain a subdomain belongs to ('' for a name not in the taxonomy)."""
        return next((d.name for d in self.domains for s in d.subdomains if s.name == subdomain), "")

    def fault(self, domain: str, subdomain: str) -> str:
        """Why a row's domain and subdomain are not a pair of this taxonomy, with the
        closest names ('' when they are)."""
        parent = self.domain_of(subdomain)
        problems = []
        if domain not in self.domain_names:
            hint = (
                f" (did you mean {parent!r}, the domain of {subdomain!r}?)"
                if parent
                else aside(domain, self.domain_names, "'{}'")
            )
            problems.append(f"unknown domain {domain!r}{hint}")
        if not parent:
            hint = aside(subdomain, self.subdomain_names, "'{}'")
            problems.append(f"unknown subdomain {subdomain!r}{hint}")
        elif domain in self.domain_names and parent != domain:
            problems.append(f"subdomain {subdomain!r} is of the domain {parent!r}, not {domain!r}")
        return "; ".join(problems)

    def record(self) -> dict[str, Any]:
        """As a build stores it, and as a file gives it (`from_record` reads both)."""
        return {
            "domains": [
                {
                    "name": d.name,
                    "label": d.label,
                    "subdomains": [{"name": s.name, "label": s.label} for s in d.subdomains],
                }
                for d in self.domains
            ]
        }

    @classmethod
    def from_record(cls, record: Any) -> Taxonomy:
        """`{domains: [{name, label?, subdomains: [...]}, ...]}`, each subdomain a name or
        `{name, label?}` (a label left out is made from the name); a ValueError saying what
        is wrong with any other shape."""
        domains = record.get("domains") if isinstance(record, Mapping) else None
        if not isinstance(domains, list) or not domains:
            raise ValueError(
                "no domains: give `domains:`, a list of domains, each with its `name` and "
                "its `subdomains` (a list of names)"
            )
        found = tuple(_domain(n, value) for n, value in enumerate(domains, start=1))
        _refuse_repeats([d.name for d in found], "domain")
        _refuse_repeats([s.name for d in found for s in d.subdomains], "subdomain")
        return cls(found)


PAPER = Taxonomy(DOMAINS)


def _domain(position: int, value: Any) -> Domain:
    name = value.get("name") if isinstance(value, Mapping) else None
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"domain {position} has no `name`")
    subs = value.get("subdomains")
    if not isinstance(subs, list) or not subs:
        raise ValueError(f"domain {name!r} has no `subdomains` (a list of names)")
    label = value.get("label") or _label(name)
    return Domain(name.strip(), str(label), tuple(_subdomain(name, sub) for sub in subs))


def _subdomain(domain: str, value: Any) -> Subdomain:
    name, label = (
        (value.get("name"), value.get("label")) if isinstance(value, Mapping) else (value, None)
    )
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"domain {domain!r}: each subdomain is a name (or a `name` and a `label`)")
    return Subdomain(name.strip(), str(label or _label(name)))


def _label(name: str) -> str:
    """A short label of a name: lowercase, `_` between words."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def _refuse_repeats(names: list[str], what: str) -> None:
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"{what} {repeated[0]!r} is listed twice; each {what} is listed once")
