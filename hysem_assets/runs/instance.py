"""The Dagster instance under ``$HYSEM_HOME/dagster``, created on first use."""

from __future__ import annotations

import os
import shutil
import socket
import sys

from dagster import DagsterInstance

from hysem_assets.settings.environment import config_dir, dagster_home, require_free_space, shared_dir

#: The PostgreSQL connection of a team server (host, port, password), written by ``hysem shared up``.
CONNECTION_FILE = "postgres.env"


def read_connection() -> dict[str, str]:
    """The team server's connection variables, or nothing when this HYSEM_HOME has no team server."""
    path = shared_dir() / CONNECTION_FILE
    if not path.is_file():
        return {}
    pairs = (line.split("=", 1) for line in path.read_text(encoding="utf-8").splitlines() if "=" in line)
    return {name.strip(): value.strip() for name, value in pairs}


def prepare_dagster_home() -> str:
    """Point DAGSTER_HOME at hysem's state folder and install the instance template once; with a team server
    here, its connection joins the environment (what is already set wins), so every command shares its instance."""
    home = dagster_home()
    home.mkdir(parents=True, exist_ok=True)
    target = home / "dagster.yaml"
    template = config_dir() / "dagster.yaml"
    if not target.exists() and template.exists():
        shutil.copyfile(template, target)
    for name, value in read_connection().items():
        os.environ.setdefault(name, value)
    os.environ["DAGSTER_HOME"] = str(home)
    return str(home)


class InstanceDatabaseDown(RuntimeError):
    """The PostgreSQL that ``dagster.yaml`` names does not answer."""


def database_down(detail: str) -> str:
    """The one line for an instance whose PostgreSQL does not answer; ``detail`` is the driver's first line."""
    return (
        f"The Dagster instance's PostgreSQL does not answer ({detail}): start it (`hysem shared up`), "
        f"or point {dagster_home() / 'dagster.yaml'} at one that runs."
    )


def require_database(home: str) -> None:
    """One connection to the instance's PostgreSQL, if it has one: Dagster's own retries would take half a
    minute and log each try before saying the same."""
    from dagster._config import process_config
    from dagster._core.instance.config import dagster_instance_config
    from dagster._core.storage.config import pg_config

    config, _ = dagster_instance_config(home)
    storage = (config.get("storage") or {}).get("postgres")
    resolved = process_config(pg_config(), storage) if storage is not None else None
    if resolved is None or not resolved.success:  # no PostgreSQL, or a setting Dagster names itself
        return
    import sqlalchemy
    from dagster_postgres.utils import pg_url_from_config

    engine = sqlalchemy.create_engine(pg_url_from_config(resolved.value), poolclass=sqlalchemy.pool.NullPool)
    try:
        engine.connect().close()
    except sqlalchemy.exc.OperationalError as exc:
        detail = str(exc.orig or exc).strip().splitlines()[0]
        raise InstanceDatabaseDown(database_down(detail)) from None
    finally:
        engine.dispose()


def get_instance() -> DagsterInstance:
    """The instance, once the disk has room to open it (a full one makes SQLite fail on reads too) and its
    database, if a server, answers."""
    require_free_space()
    require_database(prepare_dagster_home())
    return DagsterInstance.get()


class PortInUse(OSError):
    """A port on 127.0.0.1 that a server of hysem's would listen on is taken (by another of its kind, most often)."""


def require_free_port(port: int) -> None:
    """Raise :class:`PortInUse` unless ``port`` on 127.0.0.1 can be listened on. Like the servers themselves,
    the probe reuses the address: connections closing on the port (TIME_WAIT) do not keep a server off it."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as exc:
            raise PortInUse(exc.errno, exc.strerror) from None


def start_ui(port: int) -> None:
    """Replace this process by ``dagster dev`` on 127.0.0.1:``port`` with hysem's instance; a port already
    taken raises :class:`PortInUse` at once, before the daemon (which launches runs) starts."""
    require_free_port(port)
    prepare_dagster_home()
    command = ["dagster", "dev", "-h", "127.0.0.1", "-p", str(port), "-m", "hysem_assets.definitions"]
    os.execv(sys.executable, [sys.executable, "-m", *command])
