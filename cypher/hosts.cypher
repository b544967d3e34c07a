// The host graph (`linksim hosts`, linksim.procedures.hosts): one (:Host {name}) per host of the
// pages, (:Page)-[:ON_HOST]->(:Host), and (:Host)-[:HOST_LINKS_TO {links}]->(:Host) where `links`
// counts the page links from one host to another (links inside a host are not host links).
// Every statement is idempotent; a rebuild after a load leaves exactly the host graph of the
// pages and links then. linksim.cypher.query("hosts", NAME).

// name: host_names
MATCH (p:Page) WHERE p.host IS NOT NULL
RETURN DISTINCT p.host AS name;

// name: existing_hosts
MATCH (h:Host) RETURN h.name AS name;

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
MATCH (a:Page)-[:LINKS_TO]->(b:Page)
WHERE a.host IS NOT NULL AND b.host IS NOT NULL AND a.host <> b.host
RETURN a.host AS source, b.host AS target, count(*) AS links;

// name: existing_host_links
MATCH (a:Host)-[r:HOST_LINKS_TO]->(b:Host)
RETURN a.name AS source, b.name AS target, r.links AS links, id(r) AS id;

// name: set_host_links
UNWIND $rows AS row
MATCH (a:Host {name: row.source}), (b:Host {name: row.target})
MERGE (a)-[r:HOST_LINKS_TO]->(b)
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
