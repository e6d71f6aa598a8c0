"""A YAML alias bomb: a few lines that expand to hundreds of millions of strings."""

from __future__ import annotations


def alias_bomb(key: str = "toolsets", levels: int = 9) -> str:
    """Nine levels of nine aliases: 9**9 (387 million) strings once expanded."""
    lines = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for n in range(1, levels):
        lines.append(f"l{n}: &l{n} [" + ", ".join([f"*l{n - 1}"] * 9) + "]")
    return "\n".join(lines) + f"\n{key}: *l{levels - 1}\n"
