// Queries over the `pagerank` property written by `linksim pagerank`.
// Each query is named by the comment line before it; linksim.cypher.query("pagerank", NAME).

// name: top_pages
// The $limit pages of highest PageRank.
MATCH (p:Page)
WHERE p.pagerank IS NOT NULL
RETURN p.url AS url, p.title AS title, p.pagerank AS pagerank
ORDER BY p.pagerank DESC
LIMIT $limit;

// name: top_pages_of_host
// The $limit pages of highest PageRank on the host $host (e.g. 'en.wikipedia.org').
MATCH (p:Page {host: $host})
WHERE p.pagerank IS NOT NULL
RETURN p.url AS url, p.title AS title, p.pagerank AS pagerank
ORDER BY p.pagerank DESC
LIMIT $limit;

// name: page_rank
// The PageRank of the page $url, its position among all pages (1 = highest) and its in-links.
MATCH (p:Page {url: $url})
RETURN p.url AS url, p.title AS title, p.pagerank AS pagerank,
       COUNT { MATCH (q:Page) WHERE q.pagerank > p.pagerank } + 1 AS position,
       COUNT { (p)<-[:LINKS_TO]-(:Page) } AS inLinks;
