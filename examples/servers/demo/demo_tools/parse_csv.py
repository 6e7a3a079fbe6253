import csv
import io


def parse_csv(text, delimiter=","):
    """Parse CSV text with a header row into a list of row dicts (numbers converted where possible)."""
    rows = []
    for row in csv.DictReader(io.StringIO(text.strip()), delimiter=delimiter):
        rows.append({k: _number(v) for k, v in row.items()})
    return rows


def _number(value):
    for cast in (int, float):
        try:
            return cast(value)
        except (TypeError, ValueError):
            pass
    return value
