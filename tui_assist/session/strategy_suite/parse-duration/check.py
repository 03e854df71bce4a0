from durations import parse_duration

assert parse_duration("1h30m") == 5400
assert parse_duration("45s") == 45
assert parse_duration("2h") == 7200
assert parse_duration("1h5s") == 3605
for bad in ("", "abc", "5x", "1h abc", "30m1h", "1h1h"):
    try:
        parse_duration(bad)
    except ValueError:
        continue
    raise SystemExit(f"accepted {bad!r}")
