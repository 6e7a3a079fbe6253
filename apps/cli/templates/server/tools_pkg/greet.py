def greet(who: str, excited: bool = False) -> str:
    """Greet someone by name, optionally with excitement."""
    return f"Hello, {who}{'!' if excited else '.'}"
