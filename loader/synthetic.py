"""``linksim generate``: write a synthetic crawl (the copying model of :mod:`linksim.generate`) as a
gzip edge list of URLs that ``linksim load`` reads (format ``edges``).

Pages are ``https://site<H>.example/p<N>`` (``.example`` is reserved for examples, RFC 2606): page
N's host is a function of N alone, skewed so that a few hosts hold many pages and most hosts few
(host = ⌊H·u³⌋, u a hash of N in [0, 1), H = one host per 50 expected pages). The endpoint arrays
are kept in memory-mapped files beside the output while the links are generated (8 bytes a link on
disk, not in memory), then written in chunks through pyarrow's CSV writer and zlib (level 1, in a
second thread), so that memory stays bounded by the page URLs and one chunk.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import time
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from linksim.errors import LinksimError
from linksim.generate import CopyingModel, LabelledModel, generate_labelled, generate_links
from linksim.progress import Progress

log = logging.getLogger(__name__)

PAGES_PER_HOST = 50
WRITE_CHUNK = 1 << 20
_GOLDEN = 2654435761  # Knuth's multiplicative hash


@dataclass(frozen=True)
class GeneratedCrawl:
    path: Path
    links: int
    pages: int
    crawled_pages: int
    hosts: int
    seed: int
    seconds: float
    categories: Path | None = None  # a labelled crawl's labels (page<TAB>topic.subtopic)

    def lines(self) -> list[str]:
        lines = [
            f"Wrote {self.path}: {self.links:,} links, {self.pages:,} pages "
            f"({self.crawled_pages:,} with out-links), {self.hosts:,} hosts, seed {self.seed}, "
            f"in {self.seconds:.1f} s.",
            f"Load it with: linksim load {self.path}",
        ]
        if self.categories is not None:
            lines.append(f"Its labels: {self.categories} (grade lists with: linksim evaluate --categories "
                         f"{self.categories})")
        return lines


def categories_path(path: Path | str) -> Path:
    """Where a labelled crawl's labels go: beside it, ``crawl.tsv.gz`` -> ``crawl.categories.tsv``."""
    path = Path(path)
    stem = path.name
    for suffix in (".gz", ".tsv", ".txt"):
        stem = stem.removesuffix(suffix)
    return path.with_name(f"{stem}.categories.tsv")


def page_hosts(pages: int, hosts: int) -> np.ndarray:
    """The host number of every page (a function of the page number and ``hosts`` only)."""
    number = np.arange(pages, dtype=np.uint64)
    unit = ((number * np.uint64(_GOLDEN)) % np.uint64(1 << 32)).astype(np.float64) / float(1 << 32)
    return np.minimum((hosts * unit**3).astype(np.int64), hosts - 1)


def page_urls(pages: int, hosts: int):
    """The URL of every page, as a pyarrow string array (page number -> URL)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    host = pc.cast(pa.array(page_hosts(pages, hosts)), pa.string())
    number = pc.cast(pa.array(np.arange(pages, dtype=np.int64)), pa.string())
    return pc.binary_join_element_wise("https://site", host, ".example/p", number, "")


def _gzip_chunk(compressor, data) -> bytes:
    return compressor.compress(data)


def write_synthetic_crawl(
    path: Path | str,
    links: int,
    seed: int = 0,
    model: CopyingModel = CopyingModel(),
    show_progress: bool = True,
    labels: LabelledModel | None = None,
) -> GeneratedCrawl:
    """Generate ``links`` links with ``model`` and ``seed`` and write them to ``path`` (gzip TSV,
    one ``source<TAB>target`` URL pair a line). The file appears whole or not at all. With
    ``labels``, the labelled crawl of that model instead (:func:`linksim.generate.generate_labelled`)
    and its pages' labels beside it (:func:`categories_path`)."""
    path = Path(path)
    began = time.monotonic()
    if path.exists() and path.is_dir():
        raise LinksimError(f"{path} is a folder; give the name of the file to write (e.g. crawl.tsv.gz)")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise LinksimError(f"cannot write {path}: the folder {folder} does not exist")
    work = Path(tempfile.mkdtemp(prefix=".linksim-generate-", dir=folder))
    partial = work / path.name
    try:
        if labels is not None:
            return _write_labelled(path, partial, links, seed, labels, show_progress, began)
        source = np.lib.format.open_memmap(work / "source.npy", mode="w+", dtype=np.int32, shape=(links,))
        target = np.lib.format.open_memmap(work / "target.npy", mode="w+", dtype=np.int32, shape=(links,))
        pages = 0
        with Progress(2 * links, "generate", unit="link", enabled=show_progress) as progress:
            for start, stop, pages in generate_links(links, seed, model, source, target):
                progress.update(stop - start)
            hosts = max(1, model.expected_pages(links) // PAGES_PER_HOST)
            urls = page_urls(pages, hosts)
            _write_edges(partial, source, target, urls, progress)
        crawled = int(np.count_nonzero(np.bincount(source, minlength=pages)))
        del source, target
        os.replace(partial, path)
    except OSError as error:
        raise LinksimError(
            f"cannot write {path}: {error.strerror or error}; nothing was written"
        ) from None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return GeneratedCrawl(path, links, pages, crawled, hosts, seed, time.monotonic() - began)


def _write_edges(partial: Path, source: np.ndarray, target: np.ndarray, urls, progress: Progress) -> None:
    """The links as gzip TSV lines of URLs (``urls``: page number -> URL), chunk by chunk, the
    compression of one chunk beside the formatting of the next; fsync'ed."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    options = pacsv.WriteOptions(include_header=False, delimiter="\t", quoting_style="none")
    compressor = zlib.compressobj(1, zlib.DEFLATED, 31)  # 31: a gzip container
    links = len(source)
    with open(partial, "wb") as handle, ThreadPoolExecutor(1) as pool:
        pending = None
        for start in range(0, links, WRITE_CHUNK):
            stop = min(links, start + WRITE_CHUNK)
            table = pa.table({
                "source": urls.take(pa.array(source[start:stop])),
                "target": urls.take(pa.array(target[start:stop])),
            })
            sink = pa.BufferOutputStream()
            pacsv.write_csv(table, sink, options)
            if pending is not None:
                handle.write(pending.result())
            pending = pool.submit(_gzip_chunk, compressor, sink.getvalue())
            progress.update(stop - start)
        if pending is not None:
            handle.write(pending.result())
        handle.write(compressor.flush())
        handle.flush()
        os.fsync(handle.fileno())


def _write_labelled(path: Path, partial: Path, links: int, seed: int, model: LabelledModel, show_progress: bool,
                    began: float) -> GeneratedCrawl:
    """The labelled crawl's links (page ``N`` of site ``S`` is ``https://siteS.example/pN``) and its
    labels, each file written whole under a scratch name and renamed."""
    import pyarrow as pa
    import pyarrow.compute as pc

    crawl = generate_labelled(links, seed, model)
    site = pc.cast(pa.array(crawl.site), pa.string())
    number = pc.cast(pa.array(np.arange(crawl.pages, dtype=np.int64)), pa.string())
    urls = pc.binary_join_element_wise("https://site", site, ".example/p", number, "")
    with Progress(links, "generate", unit="link", enabled=show_progress) as progress:
        _write_edges(partial, crawl.source, crawl.target, urls, progress)
    labelled = np.flatnonzero(crawl.subtopic >= 0)
    categories = categories_path(path)
    scratch = partial.with_name(categories.name)
    with open(scratch, "w") as handle:
        handle.write("# page<TAB>topic.subtopic of a labelled crawl (linksim generate --labels)\n")
        for start in range(0, len(labelled), WRITE_CHUNK):
            chunk = labelled[start:start + WRITE_CHUNK]
            handle.write("".join(f"{url}\tt{t}.s{s}\n" for url, t, s in zip(
                urls.take(pa.array(chunk)).to_pylist(), crawl.topic[chunk].tolist(), crawl.subtopic[chunk].tolist())))
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(scratch, categories)
    os.replace(partial, path)
    crawled = int(np.count_nonzero(np.bincount(crawl.source, minlength=crawl.pages)))
    return GeneratedCrawl(path, links, crawl.pages, crawled, int(crawl.site.max()) + 1, seed,
                          time.monotonic() - began, categories)
