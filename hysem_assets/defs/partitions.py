"""Every asset is partitioned by query: one partition per slug in config/queries.yaml."""

from dagster import DynamicPartitionsDefinition

queries_partitions = DynamicPartitionsDefinition(name="queries")
