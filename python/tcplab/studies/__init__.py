"""Reproductions of classic TCP simulation studies, one module each."""
