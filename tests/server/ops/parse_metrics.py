#!/usr/bin/python3
"""Parses a Prometheus text-format file with prometheus_client's parser (the reference parser
of the Python client) and prints what it found, one line each:
    family NAME TYPE
    sample NAME {k=v,...} VALUE
Exit 1 (with the parser's message) if the text does not parse."""
import sys

from prometheus_client.parser import text_string_to_metric_families

try:
    with open(sys.argv[1], encoding="utf-8") as f:
        families = list(text_string_to_metric_families(f.read()))
except Exception as e:  # the parser raises ValueError and others on bad text
    print(f"parse error: {e}", file=sys.stderr)
    sys.exit(1)
for fam in families:
    print(f"family {fam.name} {fam.type}")
    for s in fam.samples:
        labels = ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()))
        print(f"sample {s.name} {{{labels}}} {s.value!r}")
