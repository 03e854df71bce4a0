"""The command line."""

import argparse

from mirror.options import load_options
from mirror.sync import sync


def main(argv=None):
    parser = argparse.ArgumentParser(prog="mirror")
    parser.add_argument("--config", default="sync.toml", help="the settings file")
    parser.add_argument("--dry-run", action="store_true", help="only show what would change")
    args = parser.parse_args(argv)
    sync(load_options(args.config), dry_run=args.dry_run)
