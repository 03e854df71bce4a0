from netcfg import parse_port

assert parse_port("0") == 0
assert parse_port(" 65535 ") == 65535
assert parse_port("8080") == 8080
for bad in ("65536", "-1", "http"):
    try:
        parse_port(bad)
    except ValueError:
        continue
    raise SystemExit(f"accepted {bad!r}")
