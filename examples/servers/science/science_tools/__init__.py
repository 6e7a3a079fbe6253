"""Scientific tools for the Stoa `science` executor: graphs (networkx), statistics and fits (scipy/numpy)."""
