"""The data sets linksim knows by name: where they come from, what their files hash to, where
they are found here.

The data directory is ``$LINKSIM_DATA`` if set, else ``../shared/data`` beside the working
directory or beside the source tree (the layout CI uses), else ``<LINKSIM_HOME>/data``. A data set is a folder of that directory; its files
are checked against the SHA-256 recorded below (the files as laid out, after unpacking the official
archives where needed), so a user elsewhere can fetch them from the source and know they match.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from linksim.errors import LinksimError

REPOSITORY = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Dataset:
    name: str
    description: str
    source: str  # official source URL
    files: dict[str, str] = field(default_factory=dict)  # relative path -> sha256
    licence: str = ""
    how: str = ""  # how the files are derived from the source


REGISTRY: dict[str, Dataset] = {
    "wikispeedia": Dataset(
        "wikispeedia",
        "Wikipedia for Schools (2007) article links with hierarchical categories and texts: "
        "4,604 articles, 119,882 links",
        "https://snap.stanford.edu/data/wikispeedia.html",
        {
            "articles.tsv": "a70d592a51542cf8bcf69fd166ba9c4045765d5a0e321ad4673766b1c62344be",
            "categories.tsv": "dc70c681319610296c5b2db03f925ae1d1d214b4576dd1b86d5e8fb56d64d54a",
            "links.tsv": "367d5679a46bf4cfb452773551a2796fb3a434a0689edb0454bdb42e3a7f405a",
            "plaintext_articles.tar.gz": "66180ae002c0c8b43112dbd6c7cfe136ea6153df0297d34405b06cd9c4e3ea6d",
        },
        "CC BY-SA (West & Leskovec, WWW 2012; West, Pineau & Precup, IJCAI 2009)",
        "articles.tsv, categories.tsv and links.tsv from wikispeedia_paths-and-graph.tar.gz; "
        "plaintext_articles.tar.gz is wikispeedia_articles_plaintext.tar.gz",
    ),
    "cnr-2000": Dataset(
        "cnr-2000",
        "Web crawl of the Italian CNR domain (2000): 325,557 pages, 3,216,152 links",
        "https://law.di.unimi.it/webdata/cnr-2000/",
        {"cnr-2000.edges.tsv.gz": "547c08b2dceffc393ca2ca4759fd179ad4382fe0199c6f17f2b25085201fda3f"},
        "Laboratory for Web Algorithmics (Boldi & Vigna, WWW 2004)",
        "the WebGraph file decoded to a tab-separated edge list, gzipped",
    ),
    "najdisi-si-2003": Dataset(
        "najdisi-si-2003",
        "Crawl of the Slovenian web (2003) with page URLs: 115,148 pages, 249,218 links",
        "http://vlado.fmf.uni-lj.si/pub/networks/data/",
        {"core2.net.gz": "27622902c730ee6b7f0c51871aecafc96e8c1346c2f7d6a9c08ac885b7c4a8cc"},
        "no licence stated",
        "the Pajek file, gzipped",
    ),
    "webkb": Dataset(
        "webkb",
        "Four university web sites (1997), LINQS release: 877 pages, 1,608 links",
        "https://linqs.org/datasets/#webkb",
        {
            "cornell.cites": "9b553733f8621bde1e149b2570da31701d6c41ac1263a4d1e94bc9fd08054a13",
            "texas.cites": "c7b6cc42170870e4470dafd9ad9330422d42ae2a1f3a746aba93039dc8b41710",
            "washington.cites": "7aa0e59b0dcba44f63fe2248671bb4c551e7322ecb512284732a08a968759223",
            "wisconsin.cites": "f5b60f45a277d93f4e883d8845b4e81fda632818ba0fe8ab8d118d9d2a9e9c73",
        },
        "WebKB (Craven et al. 1998)",
        "the .cites files of the LINQS WebKB release",
    ),
}


class DatasetMissing(LinksimError):
    exit_code = 4


def data_dir(env: dict[str, str] | None = None) -> Path:
    """Where the data sets are looked for (see the module)."""
    env = os.environ if env is None else env
    if env.get("LINKSIM_DATA"):
        return Path(env["LINKSIM_DATA"]).expanduser()
    for base in (Path.cwd(), REPOSITORY):
        shared = base.parent / "shared" / "data"
        if shared.is_dir():
            return shared
    from linksim.home import linksim_home

    return linksim_home(env) / "data"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def locate(name: str, verify: bool = False, env: dict[str, str] | None = None) -> Path:
    """The folder of data set ``name``, with its files present (and, if ``verify``, unaltered)."""
    if name not in REGISTRY:
        raise LinksimError(f"unknown data set {name!r}; known: {', '.join(sorted(REGISTRY))}")
    dataset = REGISTRY[name]
    folder = data_dir(env) / name
    missing = [f for f in dataset.files if not (folder / f).is_file()]
    if missing:
        raise DatasetMissing(
            f"data set {name} is missing {', '.join(missing)} in {folder}. Fetch it from "
            f"{dataset.source} ({dataset.how}) and put the files in {folder}, or point "
            f"$LINKSIM_DATA at a directory that has a {name}/ folder."
        )
    if verify:
        for file, expected in dataset.files.items():
            if _sha256(folder / file) != expected:
                raise DatasetMissing(
                    f"{folder / file} does not have the recorded SHA-256 {expected[:16]}...: it is not "
                    f"the file of {dataset.source}; fetch it again"
                )
    return folder
