"""The only YAML parser: text becomes documents of plain data (``documents``) with their
source positions in side tables (``positions``), bounded against hostile input (``builder``,
``events``, ``parts``); ``spans`` gives where each node is written, for fixes. No tag ever
builds an object. ``emit`` is the only YAML writer: data back to text that kubectl reads as
the same data.

Imports nothing else of pmanifest.
"""
