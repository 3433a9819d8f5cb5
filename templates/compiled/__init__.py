"""The built-in templates as Jinja compiles them for render's environment, written
by ``python -m pmanifest.generate``: do not edit. The modules run only through
``pmanifest.render.builtin`` (they read ``environment`` as a global), never by import."""
