// The graph's version: one (:LinksimGraph {name: 'links'}) node whose `id` is drawn when the node
// is created (a database emptied and loaded again gets a new one) and whose `version` every load
// bumps, before it writes and after. An index records the state it was built from; `related` and
// `sim` compare it with graph_state in milliseconds instead of streaming the graph.
// linksim.cypher.query("graph", NAME).

// name: bump_graph_version
MERGE (g:LinksimGraph {name: 'links'})
ON CREATE SET g.id = randomUUID(), g.version = 0
SET g.version = g.version + 1, g.changed = datetime()
RETURN g.id AS id, g.version AS version;

// name: graph_state
// The version and the sizes of the graph, from the count store (constant time).
OPTIONAL MATCH (g:LinksimGraph {name: 'links'})
WITH g.id AS id, coalesce(g.version, 0) AS version
CALL () { MATCH (p:Page) RETURN count(p) AS pages }
CALL () { MATCH ()-[r:LINKS_TO]->() RETURN count(r) AS links }
RETURN id, version, pages, links;

// name: host_graph_state
// The same for the host graph (`linksim hosts`): its own version node, bumped by a build that
// changes hosts or host links, before it writes and after.
OPTIONAL MATCH (g:LinksimGraph {name: 'hosts'})
WITH g.id AS id, coalesce(g.version, 0) AS version
CALL () { MATCH (h:Host) RETURN count(h) AS pages }
CALL () { MATCH ()-[r:HOST_LINKS_TO]->() RETURN count(r) AS links }
RETURN id, version, pages, links;

// name: bump_host_graph_version
// `building` is true from the first bump of a build to its last: a build cut short is marked.
MERGE (g:LinksimGraph {name: 'hosts'})
ON CREATE SET g.id = randomUUID(), g.version = 0
SET g.version = g.version + 1, g.changed = datetime(), g.building = $building
RETURN g.id AS id, g.version AS version;

// name: unfinished_changes
// The change records of loads cut short and not run again (of graph $graph; null: of any graph).
MATCH (c:LinksimChange) WHERE NOT c.done AND ($graph IS NULL OR c.graph = $graph)
RETURN min(c.version) AS version, min(c.at) AS at, count(c) AS records;

// name: host_graph_building
MATCH (g:LinksimGraph {name: 'hosts'})
RETURN coalesce(g.building, false) AS building;

// name: pages_named
// How many of the names are URLs of pages (`linksim related NAME` takes a bare host name for a
// host unless a page is stored under that name).
UNWIND $names AS name
OPTIONAL MATCH (p:Page {url: name})
RETURN count(p) AS pages;

// name: record_change
// What a load is about to change, written before it changes anything (and marked done after):
// `scope` 'pages' lists the pages whose out-links change (`sources`, URLs) and the pages that lose
// an in-link (`removedTargets`); 'all' means anything may have changed. A load that fails halfway
// leaves its record undone, and its rerun records what is still to change: together they cover
// every change. Long lists are split over several records of the same version.
CREATE (:LinksimChange {graph: $graph, version: $version, scope: $scope, sources: $sources,
                        removedTargets: $removed_targets, done: false, at: datetime()});

// name: undone_removed_targets
// The pages that lost an in-link in a load that did not finish: its rerun checks them again.
MATCH (c:LinksimChange {graph: $graph}) WHERE NOT c.done AND c.version < $version
UNWIND c.removedTargets AS url
MATCH (p:Page {url: url})
RETURN collect(DISTINCT id(p)) AS ids;

// name: finish_changes
MATCH (c:LinksimChange {graph: $graph}) WHERE NOT c.done
SET c.done = true;

// name: changes_since
// The change records of the graph after `version` (the one an index was built from), oldest first.
MATCH (c:LinksimChange {graph: $graph}) WHERE c.version > $version
RETURN c.version AS version, c.scope AS scope, c.sources AS sources, c.removedTargets AS removedTargets,
       c.done AS done
ORDER BY version;
