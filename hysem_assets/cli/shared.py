"""``hysem shared``: a team server of separate processes on one instance in PostgreSQL."""

from __future__ import annotations

import click

from hysem_assets.runs.shared import SERVICES


@click.group()
def shared() -> None:
    """A team server: PostgreSQL, a code server, the webserver and the daemon as separate processes."""


@shared.command("up")
def shared_up() -> None:
    """Start each service that is not running (PostgreSQL first) and wait until it answers."""
    from hysem_assets.runs.shared import up

    up(click.echo)


@shared.command("down")
def shared_down() -> None:
    """Stop every service, the daemon first and PostgreSQL last (runs still going stop with the code server)."""
    from hysem_assets.runs.shared import down

    down(click.echo)


@shared.command("status")
def shared_status() -> None:
    """Which services run, and their processes."""
    from hysem_assets.runs.shared import status

    services = status()
    for service in services:
        click.echo(f"{service.name:<12} {f'running (pid {service.pid})' if service.running else 'stopped'}")
    if not all(service.running for service in services):
        raise SystemExit(3)


@shared.command("run")
@click.argument("service", type=click.Choice(SERVICES))
def shared_run(service: str) -> None:
    """Run one service in the foreground (what each systemd unit in deploy/systemd runs)."""
    from hysem_assets.runs.shared import run

    run(service)


COMMANDS = (shared,)
