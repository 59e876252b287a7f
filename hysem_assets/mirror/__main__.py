"""Run the mirror in the foreground: ``python -m hysem_assets.mirror [--port N] [--snapshot DIR ...]``.

Prints the base URL of every source so clients can be pointed at it by hand. Without
``--snapshot`` it serves every bundled snapshot, as the embedded default does.
"""

from __future__ import annotations

import argparse
import threading
from pathlib import Path

from hysem_assets.mirror.server import MirrorServer, bundled_snapshot_dirs


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m hysem_assets.mirror", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--snapshot",
        type=Path,
        action="append",
        help="snapshot directory to serve; repeat to serve several as one (default: every bundled snapshot)",
    )
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default: loopback only)")
    parser.add_argument("--port", type=int, default=8765, help="port to bind; 0 picks a free one")
    args = parser.parse_args(argv)
    directories = args.snapshot or bundled_snapshot_dirs()
    with MirrorServer(directories, host=args.host, port=args.port) as server:
        print(f"Serving {', '.join(str(path) for path in server.snapshot_dirs)} at {server.root_url}")
        for source, url in server.base_urls.items():
            print(f"  {source:<10} {url}")
        print("Press Ctrl+C to stop.", flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
