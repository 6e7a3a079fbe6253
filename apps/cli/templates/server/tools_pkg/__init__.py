"""Domain functions of the {{name}} server (one module per tool, see tools.yaml)."""
