// The host graph (`linksim hosts`, linksim.procedures.hosts): one (:Host {name}) per host of the
// pages, (:Page)-[:ON_HOST]->(:Host), and (:Host)-[:HOST_LINKS_TO {links}]->(:Host) where `links`
// counts the page links from one host to another (links inside a host are not host links).
// Every statement is idempotent; a rebuild after a load leaves exactly the host graph of the
// pages and links then. linksim.cypher.query("hosts", NAME).

// The reads of a build answer lists of $chunk rows a record: the driver takes a record in
// about 30 µs, a value of a list in well under one (104,223 host links read in 2.4 s as rows,
// 0.13 s as one list).

// name: host_names
MATCH (p:Page) WHERE p.host IS NOT NULL
WITH DISTINCT p.host AS name
WITH collect(name) AS names
UNWIND range(0, size(names) - 1, $chunk) AS start
RETURN names[start..start + $chunk] AS rows;

// name: existing_hosts
MATCH (h:Host)
WITH collect(h.name) AS names
UNWIND range(0, size(names) - 1, $chunk) AS start
RETURN names[start..start + $chunk] AS rows;

// name: merge_hosts
UNWIND $names AS name
MERGE (:Host {name: name});

// name: page_id_range
MATCH (p:Page) RETURN min(id(p)) AS low, max(id(p)) AS high;

// name: on_host
// The pages of a range of node ids to their host (a page's host follows from its URL: it never
// changes, so a page that has its relationship keeps it).
MATCH (p:Page) WHERE id(p) >= $low AND id(p) < $high AND p.host IS NOT NULL AND NOT (p)-[:ON_HOST]->()
MATCH (h:Host {name: p.host})
CREATE (p)-[:ON_HOST]->(h);

// name: host_link_counts
// Rows [source host, target host, page links].
MATCH (a:Page)-[:LINKS_TO]->(b:Page)
WHERE a.host IS NOT NULL AND b.host IS NOT NULL AND a.host <> b.host
WITH a.host AS source, b.host AS target, count(*) AS links
WITH collect([source, target, links]) AS pairs
UNWIND range(0, size(pairs) - 1, $chunk) AS start
RETURN pairs[start..start + $chunk] AS rows;

// name: existing_host_links
// Rows [source host, target host, page links, relationship id].
MATCH (a:Host)-[r:HOST_LINKS_TO]->(b:Host)
WITH collect([a.name, b.name, r.links, id(r)]) AS pairs
UNWIND range(0, size(pairs) - 1, $chunk) AS start
RETURN pairs[start..start + $chunk] AS rows;

// name: create_host_links
// Pairs that have no host link yet (the build read them all under the load's lock).
UNWIND $rows AS row
MATCH (a:Host {name: row.source}), (b:Host {name: row.target})
CREATE (a)-[:HOST_LINKS_TO {links: row.links}]->(b);

// name: set_host_link_counts
UNWIND $rows AS row
MATCH ()-[r:HOST_LINKS_TO]->() WHERE id(r) = row.id
SET r.links = row.links;

// name: delete_host_links
UNWIND $ids AS id
MATCH ()-[r:HOST_LINKS_TO]->() WHERE id(r) = id
DELETE r;

// name: delete_empty_hosts
MATCH (h:Host) WHERE NOT (h)<-[:ON_HOST]-()
DETACH DELETE h;

// name: host_graph_built
MATCH (h:Host) RETURN count(h) > 0 AS built;

// name: host_counts
CALL () { MATCH (h:Host) RETURN count(h) AS hosts }
CALL () { MATCH ()-[r:ON_HOST]->() RETURN count(r) AS pages }
CALL () { MATCH ()-[r:HOST_LINKS_TO]->() RETURN count(r) AS host_links, sum(r.links) AS links }
RETURN hosts, pages, host_links, coalesce(links, 0) AS links;
