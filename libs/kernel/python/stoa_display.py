"""Rich displays of one execution for the activity feed: PNG and SVG only (never HTML). Stdlib only."""
import base64
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
                self.add("image/png", base64.b64encode(raw).decode("ascii"))
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
                self.add("image/png", base64.b64encode(buf.getvalue()).decode("ascii"))
            plt.close("all")
        except Exception:
            pass
