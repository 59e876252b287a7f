"""The Dagster instance under ``$HYSEM_HOME/dagster``, created on first use."""

from __future__ import annotations

import os
import shutil

from dagster import DagsterInstance

from hysem_assets.settings.environment import config_dir, dagster_home, require_free_space


def prepare_dagster_home() -> str:
    """Point DAGSTER_HOME at hysem's state folder and install the instance template once."""
    home = dagster_home()
    home.mkdir(parents=True, exist_ok=True)
    target = home / "dagster.yaml"
    template = config_dir() / "dagster.yaml"
    if not target.exists() and template.exists():
        shutil.copyfile(template, target)
    os.environ["DAGSTER_HOME"] = str(home)
    return str(home)


def get_instance() -> DagsterInstance:
    """The instance, once the disk has room to open it (a full one makes SQLite fail on reads too)."""
    require_free_space()
    prepare_dagster_home()
    return DagsterInstance.get()
