// linksim saved queries for Neo4j Browser: drag this file onto the Favorites drawer (star icon)
// to import them, or paste one into the editor. Set the parameters first, e.g.
//   :param url => 'https://en.wikipedia.org/wiki/Albert_Einstein'
//   :param method => 'spectral'
//   :param limit => 10

// name: related pages of a page, one method (graph view)
CALL linksim.related($url, $method, $limit);

// name: related pages of a page, one method (table)
CALL linksim.related($url, $method, $limit) YIELD rank, related, score
RETURN rank, related.title AS title, related.url AS url, round(score, 4) AS score;

// name: related pages of a page, one method (graph view, a server without linksim.related)
MATCH (current:LinksimCurrent {algorithm: $method})
WITH coalesce(current.runs, [current.run]) AS runs
MATCH path = (p:Page {url: $url})-[s:SIMILAR_TO]->(q:Page)
WHERE s.run IN runs AND NOT coalesce(s.until, 0) IN runs AND s.rank <= $limit
RETURN path;

// name: related pages of a page, every method side by side (table)
MATCH (current:LinksimCurrent)
WITH current.algorithm AS method, coalesce(current.runs, [current.run]) AS runs
MATCH (p:Page {url: $url})-[s:SIMILAR_TO]->(q:Page)
WHERE s.run IN runs AND NOT coalesce(s.until, 0) IN runs AND s.rank <= $limit
RETURN method, s.rank AS rank, q.title AS title, round(s.score, 4) AS score
ORDER BY method, rank;

// name: link neighbourhood of a page (graph view)
MATCH (p:Page {url: $url})
OPTIONAL MATCH out = (p)-[:LINKS_TO]->(:Page)
OPTIONAL MATCH inn = (:Page)-[:LINKS_TO]->(p)
RETURN p, collect(DISTINCT out)[..25] AS links_out, collect(DISTINCT inn)[..25] AS links_in;

// name: why two pages are related (graph view): set :param paths from `linksim explain A B --browser`
UNWIND $paths AS urls
UNWIND range(0, size(urls) - 1) AS i
MATCH (a:Page {url: urls[i]})
OPTIONAL MATCH (b:Page {url: urls[i + 1]})
OPTIONAL MATCH link = (a)-[:LINKS_TO]-(b)
RETURN a, b, link;

// name: top pages by PageRank (table)
MATCH (p:Page)
WHERE p.pagerank IS NOT NULL
RETURN p.title AS title, p.url AS url, p.pagerank AS pagerank
ORDER BY p.pagerank DESC
LIMIT $limit;
