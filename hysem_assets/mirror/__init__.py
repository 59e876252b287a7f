"""Local mirror of PubMed, OpenAlex, Scopus, Crossref and Unpaywall over snapshot directories, searchable."""
