"""Which page is which: the URLs of an index's pages, stored with the index.

Three arrays: the UTF-8 bytes of every URL one after another, where each starts (``offsets``, n+1
entries), and the pages in URL order (``order``), so that a URL is found by binary search over the
stored bytes (about 2·log2(n) slices) without a dictionary of every URL in memory; memory-mapped
from the store, a query touches only the pages it compares.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class PageTable:
    data: np.ndarray  # uint8, every URL's bytes
    offsets: np.ndarray  # int64 (n + 1,)
    order: np.ndarray  # int64 (n,), pages sorted by URL bytes

    @classmethod
    def from_urls(cls, urls) -> "PageTable":
        encoded = [str(url).encode("utf-8", "surrogatepass") for url in urls]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum([len(e) for e in encoded], out=offsets[1:])
        data = np.frombuffer(b"".join(encoded), dtype=np.uint8).copy()
        order = np.array(sorted(range(len(encoded)), key=encoded.__getitem__), dtype=np.int64)
        return cls(data, offsets, order)

    def arrays(self) -> dict[str, np.ndarray]:
        return {"page_url_bytes": self.data, "page_url_offsets": self.offsets, "page_url_order": self.order}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> "PageTable":
        return cls(arrays["page_url_bytes"], arrays["page_url_offsets"], arrays["page_url_order"])

    def __len__(self) -> int:
        return len(self.order)

    def _bytes(self, page: int) -> bytes:
        return self.data[int(self.offsets[page]) : int(self.offsets[page + 1])].tobytes()

    def url(self, page: int) -> str:
        return self._bytes(page).decode("utf-8", "surrogatepass")

    def urls(self, pages) -> list[str]:
        return [self.url(int(p)) for p in pages]

    def page(self, url: str) -> int | None:
        """The page of ``url``, or None if the index has no such page."""
        key = url.encode("utf-8", "surrogatepass")
        low, high = 0, len(self.order)
        while low < high:
            middle = (low + high) // 2
            if self._bytes(int(self.order[middle])) < key:
                low = middle + 1
            else:
                high = middle
        if low < len(self.order) and self._bytes(int(self.order[low])) == key:
            return int(self.order[low])
        return None
