// Machine-learning methods used in empirical studies of ozone and heart disease,
// by number of articles. Empirical: any study type other than reviews and opinion.
// Parameters: $query (the partition key). Runs unchanged on Neo4j 5 and ladybug.
MATCH (:Query {key: $query})-[:INCLUDES]->(a:Article)-[:USES_ML_METHOD]->(m:MLMethod)
WHERE NOT coalesce(toLower(a.study_type), '') IN ['', 'review', 'systematic review', 'narrative review', 'scoping review', 'meta-analysis', 'editorial', 'commentary', 'letter']
  AND EXISTS { MATCH (a)-[:STUDIES_POLLUTANT]->(p:Pollutant) WHERE toLower(p.name) = 'ozone' }
  AND EXISTS { MATCH (a)-[:REPORTS_OUTCOME]->(h:HealthOutcome) WHERE toLower(h.name) = 'heart disease' }
RETURN m.name AS method, count(DISTINCT a) AS articles
ORDER BY articles DESC, method
