"""A team server on one machine: PostgreSQL, a code server, the webserver and the daemon, each its own process.

``hysem shared up`` starts, in that order, each service that is not running and waits until it
answers; ``hysem shared down`` stops them in the reverse order; ``hysem shared run SERVICE``
runs one in the foreground, which is what each systemd unit in ``deploy/systemd`` runs. All
of them read the instance ``config/dagster-shared.yaml`` installs in ``$HYSEM_HOME/dagster``
(run, event-log and schedule storage on PostgreSQL), so the webserver's users, the daemon's
backfills and every ``hysem`` command share one instance. The code server holds hysem's
definitions: the webserver and the daemon reach it over gRPC through a workspace of one
``grpc_server``, and a run it launches is its child, so restarting the webserver or the
daemon leaves runs going.

PostgreSQL is Debian's server in a cluster of hysem's own, on 127.0.0.1 only, with a
password written once to ``$HYSEM_HOME/shared/postgres.env`` (mode 0600). It never runs as
root: started by root, it runs as the ``postgres`` user, its cluster under
``/var/lib/postgresql/hysem/``.
"""

from __future__ import annotations

import hashlib
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

from hysem_assets.core.owner import ProcessOwner, process_start
from hysem_assets.runs.instance import CONNECTION_FILE, PortInUse, read_connection, require_free_port
from hysem_assets.settings.environment import config_dir, dagster_home, hysem_home, shared_dir

#: In the order they start; they stop in the reverse one.
SERVICES = ("postgres", "code-server", "webserver", "daemon")
#: What each listens on, by default, and the variable that moves it.
PORTS = {
    "postgres": ("HYSEM_POSTGRES_PORT", 15432),
    "code-server": ("HYSEM_CODE_SERVER_PORT", 4266),
    "webserver": ("HYSEM_UI_PORT", 3000),
}
LOCATION = "hysem"
#: Longest waits for a service to answer once started: the code server loads every stage first.
READY_SECONDS = {"postgres": 60, "code-server": 240, "webserver": 180, "daemon": 180}
STOP_SECONDS = 60


class SharedServerError(RuntimeError):
    """A service of the team server that cannot start, or a machine that lacks PostgreSQL."""


@dataclass(frozen=True)
class Service:
    name: str
    pid: int | None

    @property
    def running(self) -> bool:
        return self.pid is not None


def port(service: str) -> int:
    variable, default = PORTS[service]
    return int(os.environ.get(variable) or read_connection().get(variable) or default)


def _state(*parts: str) -> Path:
    folder = shared_dir().joinpath(*parts[:-1])
    folder.mkdir(parents=True, exist_ok=True)
    return folder / parts[-1]


# -- PostgreSQL ---------------------------------------------------------------------------------------------------


def _as_root() -> bool:
    return os.geteuid() == 0


def postgres_program(name: str) -> str:
    """A PostgreSQL program: Debian's newest server first, then one on PATH."""
    versions = sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"), key=lambda p: int(p.parts[-3]))
    found = str(versions[-1]) if versions else shutil.which(name)
    if found is None:
        raise SharedServerError(
            f"PostgreSQL's {name} is not installed: `make shared-up` installs Debian's package "
            "(or run `sudo apt-get install postgresql`)."
        )
    return found


def postgres_data() -> Path:
    """The cluster's folder: under HYSEM_HOME, or, for root, under Debian's home of the ``postgres`` user."""
    if not _as_root():
        return shared_dir() / "postgres"
    digest = hashlib.sha256(str(hysem_home().resolve()).encode()).hexdigest()[:12]
    return Path("/var/lib/postgresql/hysem") / digest


def _postgres_user() -> dict:
    """``subprocess`` arguments that run a PostgreSQL program as the ``postgres`` user when this is root."""
    if not _as_root():
        return {}
    try:
        account = pwd.getpwnam("postgres")
    except KeyError:
        raise SharedServerError("PostgreSQL does not run as root and this machine has no `postgres` user.") from None
    return {"user": account.pw_uid, "group": account.pw_gid, "extra_groups": []}


def _owned_folder(path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    if user := _postgres_user():
        for folder in (path, *[p for p in path.parents if str(p).startswith("/var/lib/postgresql/hysem")]):
            os.chown(folder, user["user"], user["group"])


def connection() -> dict[str, str]:
    """The connection variables, with a password chosen (and written, mode 0600) the first time."""
    known = read_connection()
    if "HYSEM_POSTGRES_PASSWORD" not in known:
        known = {
            "HYSEM_POSTGRES_HOST": "127.0.0.1",
            "HYSEM_POSTGRES_PORT": str(port("postgres")),
            "HYSEM_POSTGRES_PASSWORD": secrets.token_urlsafe(24),
        }
        path = _state(CONNECTION_FILE)
        path.touch(mode=0o600)
        path.write_text("".join(f"{name}={value}\n" for name, value in known.items()), encoding="utf-8")
    return {**known, "HYSEM_POSTGRES_PORT": str(port("postgres"))}


def initialise_cluster() -> None:
    """``initdb`` once: a superuser ``hysem`` with the connection's password, scram authentication."""
    data = postgres_data()
    if (data / "PG_VERSION").is_file():
        return
    _owned_folder(data)
    password = data.with_name(f".{data.name}.password")  # initdb wants the cluster's folder empty
    password.touch(mode=0o600)
    password.write_text(connection()["HYSEM_POSTGRES_PASSWORD"] + "\n", encoding="utf-8")
    if user := _postgres_user():
        os.chown(password, user["user"], user["group"])
    command = [postgres_program("initdb"), "-D", str(data), "-U", "hysem", "-E", "UTF8", "--auth=scram-sha-256"]
    try:
        done = subprocess.run(
            [*command, f"--pwfile={password}"], capture_output=True, text=True, check=False, **_postgres_user()
        )
    finally:
        password.unlink(missing_ok=True)
    if done.returncode != 0:
        said = [line for line in done.stderr.splitlines() if "error" in line] or done.stderr.strip().splitlines()
        raise SharedServerError(f"initdb failed in {data}: {said[0] if said else done.returncode}")


def _connect(database: str = "postgres"):
    import psycopg2

    values = connection()
    return psycopg2.connect(
        host=values["HYSEM_POSTGRES_HOST"],
        port=int(values["HYSEM_POSTGRES_PORT"]),
        user="hysem",
        password=values["HYSEM_POSTGRES_PASSWORD"],
        dbname=database,
        connect_timeout=5,
    )


def ensure_database() -> None:
    """The ``hysem`` database, created once; Dagster creates its tables in it on first use."""
    link = _connect()
    link.autocommit = True
    try:
        with link.cursor() as cursor:
            cursor.execute("SELECT 1 FROM pg_database WHERE datname = 'hysem'")
            if cursor.fetchone() is None:
                cursor.execute("CREATE DATABASE hysem")
    finally:
        link.close()


# -- the Dagster services -----------------------------------------------------------------------------------------


def install_instance() -> Path:
    """``config/dagster-shared.yaml`` as this HYSEM_HOME's instance; a single-user one is kept beside it."""
    target = dagster_home() / "dagster.yaml"
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.is_file():
        storage = (yaml.safe_load(target.read_text(encoding="utf-8")) or {}).get("storage") or {}
        if "postgres" in storage:
            return target
        target.replace(target.with_name("dagster.single-user.yaml"))
    shutil.copyfile(config_dir() / "dagster-shared.yaml", target)
    return target


def workspace() -> Path:
    """The webserver's and the daemon's workspace: the code server, over gRPC on loopback."""
    path = _state("workspace.yaml")
    server = {"host": "127.0.0.1", "port": port("code-server"), "location_name": LOCATION}
    path.write_text(yaml.safe_dump({"load_from": [{"grpc_server": server}]}), encoding="utf-8")
    return path


def command(service: str) -> list[str]:
    """The program and arguments of ``service``, as it runs in the foreground."""
    bin_dir = Path(sys.executable).parent
    if service == "postgres":
        data = str(postgres_data())
        settings = ["listen_addresses=127.0.0.1", "unix_socket_directories=", f"port={port(service)}"]
        return [postgres_program("postgres"), "-D", data, *(part for s in settings for part in ("-c", s))]
    if service == "code-server":
        return [
            *(str(bin_dir / "dagster"), "code-server", "start", "-h", "127.0.0.1", "-p", str(port(service))),
            *("-m", "hysem_assets.definitions", "--location-name", LOCATION),
        ]
    if service == "webserver":
        return [str(bin_dir / "dagster-webserver"), "-h", "127.0.0.1", "-p", str(port(service)), "-w", str(workspace())]
    if service == "daemon":
        return [str(bin_dir / "dagster-daemon"), "run", "-w", str(workspace())]
    raise ValueError(f"no service {service!r}; the services are {', '.join(SERVICES)}")


def environment() -> dict[str, str]:
    return {**os.environ, **connection(), "HYSEM_HOME": str(hysem_home()), "DAGSTER_HOME": str(dagster_home())}


def prepare(service: str) -> None:
    """What ``service`` needs before it starts: a free port, the cluster, the database, the instance."""
    if service in PORTS:
        try:
            require_free_port(port(service))
        except PortInUse as exc:
            variable = PORTS[service][0]
            raise SharedServerError(
                f"port {port(service)} on 127.0.0.1 is taken ({exc.strerror}), so the {service} does not start: "
                f"is another one running? Stop it, or choose another port with {variable}."
            ) from None
    if service == "postgres":
        initialise_cluster()
    else:
        ensure_database()
        install_instance()


def run(service: str) -> None:
    """Replace this process by ``service`` (for systemd and for :func:`up`)."""
    prepare(service)
    program, variables = command(service), environment()
    if user := _postgres_user() if service == "postgres" else {}:
        os.setgroups([])
        os.setgid(user["group"])
        os.setuid(user["user"])
    os.execve(program[0], program, variables)


# -- the whole server ---------------------------------------------------------------------------------------------


def _pid_file(service: str) -> Path:
    return _state("run", f"{service}.pid")


def _owner(service: str) -> ProcessOwner | None:
    """The process ``start`` recorded for ``service``, while it is that process (a reused pid is not)."""
    owner = ProcessOwner.read(_pid_file(service))
    return owner if owner is not None and owner.state() == "alive" else None


def status() -> list[Service]:
    """Each service and the process that runs it, if one does."""
    return [Service(service, owner.pid if (owner := _owner(service)) else None) for service in SERVICES]


def _ready(service: str) -> bool:
    try:
        if service == "postgres":
            _connect().close()
        elif service == "code-server":
            _definitions_loaded()
        elif service == "webserver":
            urllib.request.urlopen(f"http://127.0.0.1:{port(service)}/server_info", timeout=5).close()
        else:
            return _daemon_beating()
    except SharedServerError:
        raise
    except Exception:  # not answering yet: polled again until its deadline
        return False
    return True


def _definitions_loaded() -> None:
    """The code server answers with hysem's definitions, or :class:`SharedServerError` says why it cannot."""
    from dagster._grpc.client import DagsterGrpcClient
    from dagster._serdes import deserialize_value
    from dagster._utils.error import SerializableErrorInfo

    answer = deserialize_value(DagsterGrpcClient(port=port("code-server"), host="127.0.0.1").list_repositories())
    if isinstance(answer, SerializableErrorInfo):
        raise SharedServerError(f"the code server cannot load hysem's definitions: {answer.message.strip()}")


def _daemon_beating() -> bool:
    from dagster import DagsterInstance
    from dagster._daemon.controller import all_daemons_live

    with DagsterInstance.get() as instance:
        return all_daemons_live(instance)


def start(service: str) -> int:
    """Start ``service`` in its own session, logging to ``shared/logs``; its pid once it answers."""
    prepare(service)  # its refusals in this process, in one line
    log = _state("logs", f"{service}.log")
    hysem = str(Path(sys.executable).parent / "hysem")
    with log.open("ab") as out:
        process = subprocess.Popen(
            [hysem, "shared", "run", service],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env=environment(),
        )
    owner = ProcessOwner(process.pid, socket.gethostname(), process_start(process.pid), service)
    owner.write(_pid_file(service))  # the pid and the process's start: `hysem shared run` execs the service in place
    deadline = time.monotonic() + READY_SECONDS[service]
    while not _ready(service):
        if process.poll() is not None or time.monotonic() > deadline:
            if process.poll() is None:
                _stop_process(owner, service)
            tail = log.read_text(errors="replace").strip().splitlines()[-1:]
            said = f": {tail[0]}" if tail else ""
            raise SharedServerError(f"the {service} did not start (log {log}){said}")
        time.sleep(0.5)
    return process.pid


def up(say: Callable[[str], None]) -> list[Service]:
    """Start every service that is not running, in order."""
    os.environ.update(connection(), DAGSTER_HOME=str(dagster_home()))  # this process reads the daemon's heartbeat
    install_instance()
    for service in status():
        if service.running:
            say(f"{service.name}: running (pid {service.pid})")
            continue
        pid = start(service.name)
        say(f"{service.name}: started (pid {pid}){_where(service.name)}")
    return status()


def _where(service: str) -> str:
    if service == "webserver":
        return f", the UI at http://127.0.0.1:{port(service)}"
    return f", on 127.0.0.1:{port(service)}" if service in PORTS else ""


def _stop_process(owner: ProcessOwner, service: str) -> None:
    """SIGTERM (for PostgreSQL, SIGINT: its fast shutdown) to the service's session, SIGKILL after a while."""
    first = signal.SIGINT if service == "postgres" else signal.SIGTERM
    try:
        os.killpg(owner.pid, first)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + STOP_SECONDS
    while owner.state() == "alive" and time.monotonic() < deadline:
        time.sleep(0.2)
    if owner.state() == "alive":
        try:
            os.killpg(owner.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def stop(service: str) -> bool:
    """Stop ``service`` if it runs; whether it did."""
    owner = _owner(service)
    if owner is not None:
        _stop_process(owner, service)
    _pid_file(service).unlink(missing_ok=True)
    return owner is not None


def down(say: Callable[[str], None]) -> None:
    """Stop every service, the daemon first and PostgreSQL last; runs still going are stopped with the code server."""
    for service in reversed(SERVICES):
        say(f"{service}: {'stopped' if stop(service) else 'not running'}")
