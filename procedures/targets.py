"""``--targets``: which pages a list may hold (GDS's target node filter), for ``similar``,
``related``, sets of pages and the API: ``other-hosts``, ``same-host``, ``crawled``,
``label:NAME`` or ``@FILE`` of URLs. Resolved here for an index's pages into a
:class:`linksim.ranking.targets.Targets`, which the lists apply while they are ranked.

A filtered run is current under its own key, ``<method>@<filter>`` (``spectral@other-hosts``),
beside the method's unfiltered run, and its relationships carry that key as their ``method``."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

import numpy as np

from linksim.errors import ConfigurationError, LinksimError
from linksim.ranking.targets import Targets, host_numbers

HOST_KINDS = ("other-hosts", "same-host")
KINDS = (*HOST_KINDS, "crawled", "label:NAME", "@FILE")
_LABEL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

CRAWLED_URLS = """
MATCH (p:Page) WHERE p.crawled
RETURN collect(p.url) AS urls
"""
LABELLED_URLS = """
MATCH (p:Page) WHERE $label IN labels(p)
RETURN collect(p.url) AS urls
"""


@dataclass(frozen=True)
class TargetSpec:
    """A target filter as asked: ``kind`` (other-hosts, same-host, crawled, label, urls), the
    label, or the URLs (as stored)."""

    kind: str
    label: str = ""
    urls: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """How its runs are keyed: ``<method>@<name>``."""
        if self.kind == "label":
            return f"label:{self.label}"
        if self.kind == "urls":
            digest = hashlib.blake2b("\n".join(sorted(set(self.urls))).encode(), digest_size=4).hexdigest()
            return f"urls-{digest}"
        return self.kind

    def resolve(self, runner, urls: list[str]) -> Targets:
        """The filter for the pages whose URLs are ``urls`` (page i: ``urls[i]``)."""
        n = len(urls)
        if self.kind in HOST_KINDS:
            from linksim.loader.urls import hosts_of

            return Targets.of_hosts(self.name, host_numbers(hosts_of(urls)), same=self.kind == "same-host")
        if self.kind == "urls":
            chosen = set(self.urls)
        else:
            query, parameters = (CRAWLED_URLS, {}) if self.kind == "crawled" else (LABELLED_URLS, {"label": self.label})
            chosen = set(runner.read_one(query, parameters)[0])
        allowed = np.fromiter((url in chosen for url in urls), dtype=bool, count=n)
        if not allowed.any():
            raise LinksimError(f"--targets {self.describe()}: no page of the graph passes, so every list would be "
                               "empty; nothing was started")
        return Targets.of_pages(self.name, allowed)

    def describe(self) -> str:
        return {"label": f"label:{self.label}", "urls": f"{len(self.urls)} URLs"}.get(self.kind, self.kind)


def parse_targets(spec) -> TargetSpec | None:
    """``None`` (every page), ``other-hosts``, ``same-host``, ``crawled``, ``label:NAME``, a list
    of URLs, or a :class:`TargetSpec`. Anything else is a :class:`ConfigurationError`."""
    if spec is None or isinstance(spec, TargetSpec):
        return spec
    if isinstance(spec, (list, tuple)):
        from linksim.loader.urls import stored_key

        if not spec:
            raise ConfigurationError("targets: the list of URLs is empty")
        return TargetSpec("urls", urls=tuple(sorted({stored_key(str(url)) for url in spec})))
    text = str(spec).strip()
    if text in (*HOST_KINDS, "crawled"):
        return TargetSpec(text)
    if text.startswith("label:"):
        label = text.split(":", 1)[1]
        if not _LABEL.match(label):
            raise ConfigurationError(f"--targets label:NAME takes a label name (letters, digits, _), got {text!r}")
        return TargetSpec("label", label=label)
    raise ConfigurationError(f"--targets must be one of {', '.join(KINDS)} (URLs, one a line), got {text!r}")


def refuse_on_hosts(of, spec: TargetSpec | None) -> None:
    if spec is not None and not of.pages:
        raise ConfigurationError("--targets (targets) selects pages: it does not apply to the host graph")
