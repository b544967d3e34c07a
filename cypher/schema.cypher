// Schema of the linksim graph. Every statement is idempotent (IF NOT EXISTS), so the file is
// applied before every load and by `linksim neo4j init` without harm.

// A page is identified by its normalised URL.
CREATE CONSTRAINT page_url IF NOT EXISTS
FOR (p:Page) REQUIRE p.url IS UNIQUE;

// A host of the host graph (`linksim hosts`) is identified by its name.
CREATE CONSTRAINT host_name IF NOT EXISTS
FOR (h:Host) REQUIRE h.name IS UNIQUE;

// Related pages of a host, top pages by PageRank.
CREATE INDEX page_host IF NOT EXISTS
FOR (p:Page) ON (p.host);

CREATE INDEX page_pagerank IF NOT EXISTS
FOR (p:Page) ON (p.pagerank);

// Similarity results are replaced per run: a reader reaches a run's relationships from its page,
// a retirement finds a retired run's relationships by a scan of the SIMILAR_TO type (its lookup
// index). No relationship property index: one would be updated on every write and delete (the
// index on `run` of earlier versions made the write 1.7x slower in small transactions on
// cnr-2000; the one on `method` before it, 1.3x).
DROP INDEX similar_to_run IF EXISTS;
DROP INDEX similar_to_method IF EXISTS;

// The run counter (procedures/similarity.py, ALLOCATE_RUN): one node, never two.
CREATE CONSTRAINT linksim_counter_name IF NOT EXISTS
FOR (c:LinksimCounter) REQUIRE c.name IS UNIQUE;

// Every indexer run is recorded as a node with a unique id.
CREATE CONSTRAINT linksim_run_id IF NOT EXISTS
FOR (r:LinksimRun) REQUIRE r.id IS UNIQUE;

// The current run of a method is found by algorithm (related_pages.cypher).
CREATE INDEX linksim_run_algorithm IF NOT EXISTS
FOR (r:LinksimRun) ON (r.algorithm);

// One node per method points at its current SIMILAR_TO run (updated in place by the switch).
CREATE CONSTRAINT linksim_current_algorithm IF NOT EXISTS
FOR (c:LinksimCurrent) REQUIRE c.algorithm IS UNIQUE;

// Writer locks (procedures/locks.py): a name is held by one writer at a time.
CREATE CONSTRAINT linksim_lock_name IF NOT EXISTS
FOR (l:LinksimLock) REQUIRE l.name IS UNIQUE;
