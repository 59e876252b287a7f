// Machine-learning methods used in empirical studies of ozone and heart disease, by number of articles.
// Empirical: the study designs of config/dictionaries/study_type.yaml other than reviews and editorials.
// Heart disease: the cardiac outcomes of config/dictionaries/health_outcome.yaml (not stroke or blood pressure).
// Parameter: $query, the partition key. Runs unchanged on Neo4j 5 and on ladybug.
MATCH (:Query {key: $query})-[:INCLUDES]->(a:Article)-[:USES_ML_METHOD]->(m:MLMethod)
WHERE a.study_type IN ['time-series', 'case-crossover', 'cohort', 'cross-sectional', 'panel', 'ecological',
                       'prediction', 'exposure modelling', 'trial']
  AND EXISTS { MATCH (a)-[:STUDIES_POLLUTANT]->(p:Pollutant) WHERE p.name = 'ozone' }
  AND EXISTS {
    MATCH (a)-[:REPORTS_OUTCOME]->(h:HealthOutcome)
    WHERE h.name IN ['coronary heart disease', 'myocardial infarction', 'acute coronary syndrome', 'heart failure',
                     'arrhythmia', 'atrial fibrillation', 'out-of-hospital cardiac arrest']
  }
RETURN m.name AS method, count(DISTINCT a) AS articles
ORDER BY articles DESC, toLower(method)
