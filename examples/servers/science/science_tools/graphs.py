"""Graph tools over networkx."""
import networkx as nx


def build_graph(edges, directed=False):
    """Build a graph from [source, target] or [source, target, weight] edges."""
    graph = nx.DiGraph() if directed else nx.Graph()
    for edge in edges:
        if len(edge) == 3:
            graph.add_edge(edge[0], edge[1], weight=float(edge[2]))
        elif len(edge) == 2:
            graph.add_edge(edge[0], edge[1], weight=1.0)
        else:
            raise ValueError("each edge must be [source, target] or [source, target, weight], got %r" % (edge,))
    return graph


def random_graph(n, p, seed=0):
    """Erdős–Rényi random graph G(n, p) with unit edge weights (reproducible with seed)."""
    graph = nx.gnp_random_graph(int(n), float(p), seed=seed)
    nx.set_edge_attributes(graph, 1.0, "weight")
    return graph


def graph_summary(graph):
    """Node and edge counts, density, connected components and average clustering of a graph."""
    undirected = graph.to_undirected() if graph.is_directed() else graph
    return {
        "nodes": graph.number_of_nodes(),
        "edges": graph.number_of_edges(),
        "density": nx.density(graph),
        "components": nx.number_connected_components(undirected),
        "average_clustering": nx.average_clustering(undirected),
    }


def shortest_path(graph, source, target, weighted=True):
    """Shortest path between two nodes (Dijkstra on 'weight' when weighted) and its total length."""
    weight = "weight" if weighted else None
    try:
        path = nx.shortest_path(graph, source, target, weight=weight)
    except nx.NetworkXNoPath:
        return {"path": None, "length": None, "reachable": False}
    length = nx.path_weight(graph, path, weight="weight") if weighted else len(path) - 1
    return {"path": path, "length": length, "reachable": True}


def centrality(graph, kind="betweenness", top=5):
    """Rank nodes by centrality (betweenness, degree, closeness or pagerank); returns the top nodes."""
    measures = {
        "betweenness": lambda g: nx.betweenness_centrality(g, weight="weight"),
        "degree": nx.degree_centrality,
        "closeness": nx.closeness_centrality,
        "pagerank": lambda g: nx.pagerank(g, weight="weight"),
    }
    if kind not in measures:
        raise ValueError("kind must be one of %s, got %r" % (", ".join(sorted(measures)), kind))
    scores = measures[kind](graph)
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], str(kv[0])))[: int(top)]
    return {"kind": kind, "ranking": [[node, round(score, 6)] for node, score in ranked]}


def detect_communities(graph, resolution=1.0):
    """Find communities with greedy modularity maximisation; returns them (largest first) and the modularity."""
    from networkx.algorithms import community

    undirected = graph.to_undirected() if graph.is_directed() else graph
    groups = community.greedy_modularity_communities(undirected, weight="weight", resolution=resolution)
    parts = [sorted(g, key=str) for g in sorted(groups, key=len, reverse=True)]
    return {"communities": parts, "count": len(parts), "modularity": community.modularity(undirected, parts, weight="weight")}
