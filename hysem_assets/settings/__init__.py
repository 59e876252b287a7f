"""Configuration: the profile, queries, review protocols, model backends, environment variables, YAML loading.

The one package that reads environment variables. Assets get ``config/`` through the
``review_config`` resource (queries and protocols from here; the questions, topic grid and
citation style from the parsers of the stages that own them), never by reading files.
"""
