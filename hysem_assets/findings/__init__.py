"""What each study found: the direction of a comparison's result, its evidence sentence and estimate, pooled."""
