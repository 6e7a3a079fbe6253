"""Statistics, fits and optimisation over numpy and scipy."""
import numpy as np
from scipy import optimize, stats


def make_dataset(x, y=None):
    """Turn Python lists into numpy arrays (x, and y when given); checks lengths and finiteness."""
    xs = np.asarray(x, dtype=float)
    if not np.all(np.isfinite(xs)):
        raise ValueError("x contains NaN or infinite values")
    data = {"x": xs, "n": int(xs.size)}
    if y is not None:
        ys = np.asarray(y, dtype=float)
        if ys.shape != xs.shape:
            raise ValueError("x and y must have the same length (%d != %d)" % (xs.size, ys.size))
        data["y"] = ys
    return data


def describe_stats(values):
    """Mean, standard deviation, median, quartiles, skewness and kurtosis of a sample."""
    arr = np.asarray(values, dtype=float)
    q1, median, q3 = np.percentile(arr, [25, 50, 75])
    return {
        "n": int(arr.size),
        "mean": float(arr.mean()),
        "std": float(arr.std(ddof=1)) if arr.size > 1 else 0.0,
        "median": float(median),
        "q1": float(q1),
        "q3": float(q3),
        "skewness": float(stats.skew(arr)),
        "kurtosis": float(stats.kurtosis(arr)),
    }


def linear_fit(x, y):
    """Least-squares line y = slope * x + intercept with r², p-value and standard error."""
    res = stats.linregress(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
    return {"slope": float(res.slope), "intercept": float(res.intercept), "r_squared": float(res.rvalue ** 2),
            "p_value": float(res.pvalue), "stderr": float(res.stderr)}


def fit_curve(x, y, model="exponential"):
    """Fit a nonlinear model (exponential a*exp(b*x), power a*x**b, or logistic) by least squares."""
    models = {
        "exponential": (lambda t, a, b: a * np.exp(b * t), [1.0, 0.1]),
        "power": (lambda t, a, b: a * np.power(t, b), [1.0, 1.0]),
        "logistic": (lambda t, k, r, t0: k / (1 + np.exp(-r * (t - t0))), [1.0, 1.0, 0.0]),
    }
    if model not in models:
        raise ValueError("model must be one of %s, got %r" % (", ".join(sorted(models)), model))
    func, p0 = models[model]
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    params, _ = optimize.curve_fit(func, xs, ys, p0=p0, maxfev=20000)
    residual = ys - func(xs, *params)
    ss_tot = float(np.sum((ys - ys.mean()) ** 2)) or 1.0
    return {"model": model, "params": [float(p) for p in params], "r_squared": 1 - float(np.sum(residual ** 2)) / ss_tot}


def t_test(a, b, equal_var=False):
    """Two-sample t-test (Welch's by default): t statistic, p-value and whether p < 0.05."""
    res = stats.ttest_ind(np.asarray(a, dtype=float), np.asarray(b, dtype=float), equal_var=equal_var)
    return {"t": float(res.statistic), "p_value": float(res.pvalue), "significant": bool(res.pvalue < 0.05)}


def minimize_function(func, x0, method="BFGS"):
    """Minimise a Python function of a vector from a starting point (scipy.optimize.minimize)."""
    res = optimize.minimize(func, np.asarray(x0, dtype=float), method=method)
    return {"x": [float(v) for v in np.atleast_1d(res.x)], "fun": float(res.fun), "success": bool(res.success), "message": str(res.message)}
