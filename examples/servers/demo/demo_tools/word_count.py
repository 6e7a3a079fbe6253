import collections
import re


def word_count(text, top=10):
    """Most frequent words of a text (case-insensitive) and the total word count."""
    words = re.findall(r"[a-z0-9']+", text.lower())
    return {"total": len(words), "top": collections.Counter(words).most_common(top)}
