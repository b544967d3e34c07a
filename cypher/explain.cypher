// Links read by `linksim explain` (linksim.procedures.explain): the in-links or out-links of the
// few pages a walk or a path search stands on, never the whole graph. Self-links are left out,
// as the indexes leave them out. linksim.cypher.query("explain", NAME).

// name: in_links
UNWIND $urls AS url
MATCH (p:Page {url: url})
OPTIONAL MATCH (q:Page)-[:LINKS_TO]->(p) WHERE q <> p
RETURN url, collect(DISTINCT q.url) AS neighbours;

// name: out_links
UNWIND $urls AS url
MATCH (p:Page {url: url})
OPTIONAL MATCH (p)-[:LINKS_TO]->(q:Page) WHERE q <> p
RETURN url, collect(DISTINCT q.url) AS neighbours;

// name: shortest_paths
// A shortest link path from each pair's first page to its second (Neo4j's bidirectional search);
// extended Jaccard's shared pages reach both pages within the radius, so the paths are short.
UNWIND $pairs AS pair
MATCH (a:Page {url: pair[0]}), (b:Page {url: pair[1]})
MATCH path = shortestPath((a)-[:LINKS_TO*]->(b))
RETURN pair, [n IN nodes(path) | n.url] AS urls;

// name: explanation_graph
// For Neo4j Browser's graph view: the pages of an explanation's paths and the links between
// them. `linksim explain URL URL --browser` prints the :param paths line (lists of URLs: each
// walk or link path, or a single page) to set first.
UNWIND $paths AS urls
UNWIND range(0, size(urls) - 1) AS i
MATCH (a:Page {url: urls[i]})
OPTIONAL MATCH (b:Page {url: urls[i + 1]})
OPTIONAL MATCH link = (a)-[:LINKS_TO]-(b)
RETURN a, b, link;
