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
