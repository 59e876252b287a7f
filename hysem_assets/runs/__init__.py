"""Runs that recover: who owns a run, reclaiming dead runs, supervising a command-line run, ``hysem doctor``.

``hysem materialize`` runs in process, so when its process dies (``kill -9``, a machine
out of memory) no Dagster daemon knows: the run stays STARTED and keeps its pool slots,
and every later run waits on them for ever. These modules record which process owns
each command-line run (``owner``), reclaim runs whose process is gone (``reclaim``), run a
materialization so that signals stop it cleanly and pool waits are shown (``supervise``),
and let a user see and fix what is stuck (``doctor``).
"""
