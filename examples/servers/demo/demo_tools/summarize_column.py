import statistics


def summarize_column(rows, column):
    """Count, mean, median, standard deviation, min and max of a numeric column."""
    values = [row[column] for row in rows if isinstance(row.get(column), (int, float))]
    if not values:
        raise ValueError("column %r has no numeric values in the %d rows given" % (column, len(rows)))
    return {
        "count": len(values),
        "mean": statistics.fmean(values),
        "median": statistics.median(values),
        "stdev": statistics.stdev(values) if len(values) > 1 else 0.0,
        "min": min(values),
        "max": max(values),
    }
