"""Jinja2 templates shipped with pmanifest (a data package)."""
