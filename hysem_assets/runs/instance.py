"""The Dagster instance under ``$HYSEM_HOME/dagster``, created on first use."""

from __future__ import annotations

import os
import shutil
import socket
import sys

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


class PortInUse(OSError):
    """The UI's port on 127.0.0.1 is taken (by another ``hysem ui``, most often)."""


def start_ui(port: int) -> None:
    """Replace this process by ``dagster dev`` on 127.0.0.1:``port`` with hysem's instance; a port already
    taken raises :class:`PortInUse` at once, before the daemon (which launches runs) starts."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as exc:
            raise PortInUse(exc.errno, exc.strerror) from None
    prepare_dagster_home()
    command = ["dagster", "dev", "-h", "127.0.0.1", "-p", str(port), "-m", "hysem_assets.definitions"]
    os.execv(sys.executable, [sys.executable, "-m", *command])
