"""Question answering over a partition: hybrid and symbolic retrieval, a revise loop, cited answers.

``ask`` imports its engine on first need, so a command that only reads the answer cache
(``hysem ask`` with a repeated question) imports no store, model or Dagster machinery.
"""
