"""Rich displays of one execution for the activity feed: PNG and SVG only (never HTML). Stdlib only."""
import io
import sys

MAX_DISPLAY_BYTES = 5 * 1024 * 1024


class Displays(object):
    """Collects PNG/SVG displays of one execution (never HTML)."""

    def __init__(self):
        self.items = []
        self.size = 0

    def add(self, mime, data, metadata=None):
        size = len(data)
        if self.size + size > MAX_DISPLAY_BYTES:
            return
        self.size += size
        self.items.append({"mime_type": mime, "data": data, "metadata": metadata or {}})

    def add_object(self, obj):
        png = getattr(obj, "_repr_png_", None)
        if callable(png):
            raw = png()
            if raw:
                self.add("image/png", _b64(raw))
                return True
        svg = getattr(obj, "_repr_svg_", None)
        if callable(svg):
            raw = svg()
            if raw:
                self.add("image/svg+xml", raw)
                return True
        return False

    def capture_matplotlib(self):
        plt = sys.modules.get("matplotlib.pyplot")
        if plt is None:
            return
        try:
            for num in plt.get_fignums():
                fig = plt.figure(num)
                buf = io.BytesIO()
                fig.savefig(buf, format="png", bbox_inches="tight")
                self.add("image/png", _b64(buf.getvalue()))
            plt.close("all")
        except Exception:
            pass


def _b64(raw):
    import base64  # only for a PNG: ~1.5 ms of every kernel start otherwise
    return base64.b64encode(raw).decode("ascii")
