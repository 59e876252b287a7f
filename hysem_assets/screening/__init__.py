"""Title and abstract screening: relevance ranking by active learning, and its simulation on labelled reviews."""
