import operator

_OPS = {"==": operator.eq, "!=": operator.ne, ">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}


def filter_rows(rows, column, op, value):
    """Keep the rows whose `column` compares true against `value` with `op` (==, !=, >, >=, <, <=)."""
    if op not in _OPS:
        raise ValueError("op must be one of %s, got %r" % (", ".join(_OPS), op))
    compare = _OPS[op]
    return [row for row in rows if column in row and compare(row[column], value)]
