"""The default's link embedding on Spark: :func:`linksim.embedding.embedding_and_share` with its
block of vectors on the executors, the same floats as the one-machine build.

The block (n x (rank + oversample) float32) is cut into the chunks of ``chunk`` pages
(:data:`linksim.lowrank.CHUNK`) that the one-machine solver walks: a chunk is one row of an RDD,
a numpy array on an executor. Each step of :func:`linksim.lowrank.leading_eigenvectors` is then a
step over the chunks:

- a multiplication by X X^T (:class:`linksim.embedding.LinkGram`) is four gathers, each page's row
  summed over its link list in float64 by the same compiled kernel, in the same order: a chunk
  asks the chunks that hold its pages' neighbours for their rows (a shuffle of page numbers, then
  one of the rows asked for), then sums them;
- a Gram matrix is each chunk's product, computed as the one-machine loop computes it, summed in
  the driver in chunk order; a rotation is applied to each chunk with the same product;
- the start block is drawn in the driver a chunk at a time from one generator (its stream is
  sequential) and the small matrices (Gram, rotation, Rayleigh-Ritz) are the driver's.

So the links are walked four times a multiplication on the executors, and the block is never
gathered: the driver holds (rank + oversample)^2 numbers a chunk.
"""

from __future__ import annotations

import numpy as np

from linksim.lowrank import CHUNK, one_blas_thread, ritz_pairs, svqb_rotation


class _Chunks:
    """The RDDs of one solve: the chunks' link lists, their pages' scalars, and the joins."""

    def __init__(self, edges, n: int, chunk: int, partitions: int) -> None:
        self.n, self.chunk, self.partitions = n, chunk, partitions
        self.count = -(-n // chunk)
        self.context = edges.sparkSession.sparkContext
        self._requests: dict = {}
        pairs = edges.select("src", "dst").distinct().rdd.map(lambda r: (int(r[0]), int(r[1])))
        pairs = pairs.filter(lambda p: p[0] != p[1]).cache()
        self.out_lists = self._lists(pairs)
        self.in_lists = self._lists(pairs.map(lambda p: (p[1], p[0])))

    def keyed(self, rdd):
        """``rdd`` partitioned by chunk with Spark's default partitioner: the RDDs of a solve all are,
        so that joining two of them moves nothing (only a gather's two shuffles move data)."""
        return rdd.partitionBy(self.partitions)

    def each(self, function):
        """An RDD of (chunk, function(chunk, first page, pages))."""
        chunk, n = self.chunk, self.n
        return self.keyed(self.context.parallelize(range(self.count), self.partitions).map(
            lambda c: (c, function(c, c * chunk, min(chunk, n - c * chunk)))))

    def _lists(self, pairs):
        """(chunk, (indptr, indices)): each page's neighbours in increasing page order."""
        chunk, n = self.chunk, self.n

        def build(item):
            c, rows = item
            rows = np.array(list(rows or []), dtype=np.int64).reshape(-1, 2)
            first, size = c * chunk, min(chunk, n - c * chunk)
            order = np.lexsort((rows[:, 1], rows[:, 0]))
            indptr = np.zeros(size + 1, dtype=np.int64)
            np.cumsum(np.bincount(rows[:, 0] - first, minlength=size), out=indptr[1:])
            return c, (indptr, rows[order, 1].astype(np.int32))

        grouped = pairs.map(lambda p: (p[0] // chunk, p)).groupByKey(self.partitions)
        every = self.context.parallelize([(c, None) for c in range(self.count)], self.partitions)
        return self.keyed(every.leftOuterJoin(grouped, self.partitions).map(lambda item: (item[0], item[1][1]))
                          .map(build)).cache()

    def fetch(self, lists, provided):
        """(chunk, (indptr, local indices, fetched payloads)): each chunk's lists with their
        neighbours' payloads (a tuple of arrays, a row each, from ``provided``: (chunk, payloads)),
        the indices remapped into the fetched rows, which are in increasing page order."""
        chunk, partitions = self.chunk, self.partitions

        def requests(item):
            c, (indptr, indices) = item
            wanted = np.unique(indices).astype(np.int64)
            owners = wanted // chunk
            cuts = np.flatnonzero(np.diff(owners)) + 1
            return [(int(part[0] // chunk), (c, part)) for part in np.split(wanted, cuts) if len(part)]

        def serve(item):
            owner, ((asker, pages), payloads) = item
            local = pages - owner * chunk
            return asker, (pages, tuple(p[local] for p in payloads))

        if id(lists) not in self._requests:  # which rows each chunk asks for: the same every gather
            self._requests[id(lists)] = lists.flatMap(requests).cache()
        served = self._requests[id(lists)].join(provided, partitions).map(serve).groupByKey(partitions)

        def assemble(value):
            (indptr, indices), answers = value
            answers = sorted(answers or [], key=lambda a: int(a[0][0]))  # owners in page order
            pages = np.concatenate([a[0] for a in answers]) if answers else np.zeros(0, dtype=np.int64)
            payloads = tuple(np.concatenate([a[1][k] for a in answers]) for k in range(len(answers[0][1]))) \
                if answers else ()
            return indptr, np.searchsorted(pages, indices).astype(np.int32), payloads

        return lists.leftOuterJoin(served, partitions).mapValues(assemble)

    def collect_sorted(self, rdd) -> list:
        return [value for _, value in sorted(rdd.collect(), key=lambda item: item[0])]


def _row_sums(chunks: _Chunks, lists, values):
    """(chunk, Σ values[j] over each page's list), float64, summed as :func:`linksim.embedding._row_sums`."""
    def compute(value):
        from linksim.embedding import _row_sums as kernel

        indptr, local, payloads = value
        return kernel(indptr, local, payloads[0] if payloads else np.zeros(0))

    return chunks.fetch(lists, values.mapValues(lambda v: (v,))).mapValues(compute)


def _gathered(chunks: _Chunks, lists, source, column_scale, row_scale, width: int, base=None):
    """(chunk, rows): out[i] (+)= row_scale[i] · Σ_j column_scale[j] · source[j] over i's list, in
    float32 as :func:`linksim.embedding._gather` writes it (``base``: the rows it adds to).
    ``column_scale`` None: ones."""
    provided = source.mapValues(lambda rows: (rows,)) if column_scale is None else \
        source.join(column_scale, chunks.partitions)
    fetched = chunks.fetch(lists, provided).join(row_scale, chunks.partitions)
    if base is not None:
        fetched = fetched.join(base, chunks.partitions).mapValues(lambda v: (*v[0], v[1]))
    else:
        fetched = fetched.mapValues(lambda v: (*v, None))

    def compute(value):
        from linksim.embedding import _gather as kernel

        (indptr, local, payloads), scale_rows, before = value
        size = len(indptr) - 1
        rows = np.ascontiguousarray(payloads[0]) if payloads else np.zeros((0, width), dtype=np.float32)
        scale = payloads[1] if len(payloads) > 1 else np.ones(len(rows))
        out = np.array(before, dtype=np.float32) if before is not None else np.empty((size, width), dtype=np.float32)
        if width:
            kernel(indptr, local, rows, 0, scale, scale_rows, out, 0, width, 0, size, before is not None)
        return out

    return fetched.mapValues(compute)


class _Gram:
    """X X^T on the chunks (:class:`linksim.embedding.LinkGram`'s four gathers)."""

    def __init__(self, chunks: _Chunks) -> None:
        from linksim.embedding import IDF_POWER

        n = chunks.n
        self.chunks = chunks
        degree = lambda lists: lists.mapValues(lambda pair: np.diff(pair[0]).astype(np.float64))  # noqa: E731
        # A parent w is a feature of its children's rows (df = w's out-degree), a child v of its parents'.
        def squared_weight(d: np.ndarray) -> np.ndarray:
            weight = np.log(n / np.maximum(d, 1.0)) ** IDF_POWER
            return weight * weight

        self.parent_squared = degree(chunks.out_lists).mapValues(squared_weight).cache()
        self.child_squared = degree(chunks.in_lists).mapValues(squared_weight).cache()
        squared = _row_sums(chunks, chunks.in_lists, self.parent_squared).join(
            _row_sums(chunks, chunks.out_lists, self.child_squared), chunks.partitions).mapValues(lambda p: p[0] + p[1])
        self.inverse_norm = chunks.keyed(squared.mapValues(
            lambda s: np.divide(1.0, np.sqrt(s), out=np.zeros(len(s)), where=s > 0))).cache()
        self.featured = chunks.keyed(squared.mapValues(lambda s: s > 0)).cache()

    def __call__(self, block, width: int):
        chunks = self.chunks
        # W_in^T N Q: a parent's sum over its children; W_out^T N Q: a child's over its parents.
        parents = _gathered(chunks, chunks.out_lists, block, self.inverse_norm, self.parent_squared, width).cache()
        children = _gathered(chunks, chunks.in_lists, block, self.inverse_norm, self.child_squared, width).cache()
        out = _gathered(chunks, chunks.in_lists, parents, None, self.inverse_norm, width)
        out = _gathered(chunks, chunks.out_lists, children, None, self.inverse_norm, width, base=out).cache()
        out.count()
        parents.unpersist(), children.unpersist()
        return out


def _gram_of(chunks: _Chunks, block, columns: int) -> np.ndarray:
    """block^T block in float64, each chunk's product summed in chunk order (:func:`linksim.lowrank._gram`)."""
    def product(rows: np.ndarray) -> np.ndarray:
        rows = rows[:, :columns].astype(np.float64)
        with one_blas_thread():
            return rows.T @ rows

    gram = np.zeros((columns, columns))
    for part in chunks.collect_sorted(block.mapValues(product)):
        gram += part
    return gram


def _rotated(chunks: _Chunks, block, columns: int, rotation: np.ndarray):
    """Each chunk's rows[:, :columns] @ rotation, float32 (:func:`linksim.lowrank._rotate`)."""
    shared = chunks.context.broadcast(rotation)

    def rotate(rows: np.ndarray) -> np.ndarray:
        with one_blas_thread():
            return (rows[:, :columns].astype(np.float64) @ shared.value).astype(np.float32)

    return chunks.keyed(block.mapValues(rotate)).cache()


def _orthonormalized(chunks: _Chunks, block, columns: int):
    """(block, columns): :func:`linksim.lowrank._orthonormalize` on the chunks."""
    for _ in range(2):
        gram = _gram_of(chunks, block, columns)
        with one_blas_thread():
            rotation = svqb_rotation(gram)
        if rotation is None:
            return block, 0
        block = _rotated(chunks, block, columns, rotation)
        block.count()
        columns = rotation.shape[1]
    return block, columns


def embedding_and_share(edges, n: int, rank: int, seed: int = 0, passes: int | None = None,
                        oversample: int | None = None, partitions: int = 4, chunk: int = CHUNK, log=None):
    """:func:`linksim.embedding.embedding_and_share` of the links ``(src, dst)`` with the block on the
    executors: (RDD of (chunk, float32 rows of unit length or zero), the share of the features'
    weight it holds), the one-machine floats when ``chunk`` is its :data:`linksim.lowrank.CHUNK`."""
    from linksim.embedding import OVERSAMPLE, PASSES, unit_rows

    passes = PASSES if passes is None else passes
    oversample = OVERSAMPLE if oversample is None else oversample
    chunks = _Chunks(edges, n, chunk, partitions)
    nothing = (chunks.each(lambda c, first, size: np.zeros((size, 0), dtype=np.float32)), 0.0)
    if n < 3 or rank < 1:
        return nothing
    rank = min(rank, n - 1)
    gram = _Gram(chunks)
    featured = int(sum(int(f.sum()) for f in chunks.collect_sorted(gram.featured)))
    if not featured:
        return nothing
    width = min(n, rank + oversample)
    generator = np.random.default_rng(seed)
    starts = [(c, generator.standard_normal((min(chunk, n - c * chunk), width), dtype=np.float32))
              for c in range(chunks.count)]  # one stream, drawn in chunk order as the one-machine solver does
    block = chunks.keyed(chunks.context.parallelize(starts, partitions)).cache()
    del starts
    block, columns = _orthonormalized(chunks, block, width)
    for step in range(passes):
        if log:
            log(f"subspace iteration {step + 1} of {passes} ({columns} columns), on the executors")
        if not columns:
            break
        block, columns = _orthonormalized(chunks, gram(block, columns), columns)
    if not columns:
        return nothing
    from linksim.lowrank import BLOCK

    product = gram(block, columns)

    def projected_part(pair):
        rows, out = pair
        rows64 = rows[:, :columns].astype(np.float64)
        part = np.zeros((columns, columns))
        with one_blas_thread():
            for start in range(0, columns, BLOCK):  # the one-machine solver's products, a block of columns each
                width_ = min(BLOCK, columns - start)
                part[:, start : start + width_] = rows64.T @ out[:, start : start + width_].astype(np.float64)
        return part

    projected = np.zeros((columns, columns))
    for part in chunks.collect_sorted(block.join(product, partitions).mapValues(projected_part)):
        projected += part
    with one_blas_thread():
        values, vectors = ritz_pairs(projected, rank)
    block = _rotated(chunks, block, columns, vectors)
    scale = np.sqrt(values)
    embedding = block.join(gram.featured, partitions).mapValues(
        lambda pair: unit_rows(pair[0], scale, pair[1]).astype(np.float32)).cache()
    embedding.count()
    return embedding, float(np.float32(min(1.0, float(values.sum()) / featured)))
