"""Reads Prometheus text exposition on stdin; prints its samples as JSON, parsed by the official Python client."""

import json
import sys

from prometheus_client.parser import text_string_to_metric_families

families = [
    {
        "name": f.name,
        "type": f.type,
        "help": f.documentation,
        "samples": [{"name": s.name, "labels": s.labels, "value": s.value} for s in f.samples],
    }
    for f in text_string_to_metric_families(sys.stdin.read())
]
json.dump(families, sys.stdout)
