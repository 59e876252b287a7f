"""Dagster runs for the command line: launching them, recovering them, ``hysem doctor``.

``launch`` registers partitions, materializes assets, reads them back and reports their
status; ``instance`` and ``backfill`` reach the persistent instance and a running webserver.
``hysem materialize`` runs in process, so when its process dies (``kill -9``, a machine
out of memory) no Dagster daemon knows: the run stays STARTED and keeps its pool slots,
and every later run waits on them for ever. So the owning process is recorded on each
run (:mod:`hysem_assets.core.owner`), runs whose process is gone are reclaimed
(``reclaim``), a materialization runs so that signals stop it cleanly and pool waits are
shown (``supervise``), and a user can see and fix what is stuck (``doctor``).
"""
