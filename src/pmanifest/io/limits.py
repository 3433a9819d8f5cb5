"""Every bound pmanifest puts on what it reads, in one place: input sizes, the nesting and
expansion of parsed text, the size of numbers, and the work of each analyser (shell scripts,
templates, policy schemas), each in proportion to the input's bytes where work can grow with
them. No valid input up to the documented sizes comes near one (each says why).

``LIMITS`` is the table docs/reference.md's "Hostile input" section shows (``tests/test_limits.py``
keeps them equal); the modules that enforce a bound import it from here.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

# -- reading ----------------------------------------------------------------------------------
# The most read from one input: far above any manifest (the API server stores at most
# ~1.5 MiB per object), far below what would exhaust memory.
MAX_INPUT_BYTES = 64 * 1024 * 1024
MAX_KUSTOMIZATION_BYTES = 1 << 20  # read by the patch search: a kustomization is a few lines
# directory entries looked at to count what a walk left out (a run that found no object)
MAX_LEFT_OUT_ENTRIES = 200_000
MAX_KUSTOMIZATIONS_FOLLOWED = 10_000  # kustomizations read for the labels of selectors

# -- YAML (the loader) --------------------------------------------------------------------------
MAX_DEPTH = 200  # levels of nesting of a document (aliases count where they are attached)
MAX_ALIAS_EXPANSION = 100_000  # nodes that aliases of one document may copy (billion laughs)
# Every node's position is keyed by its full path, so a node costs memory in proportion to its
# depth: 1,000,000 items nested 198 levels deep (a 2 MB file) took 2 GB and 24 s. The sum of
# path lengths of a document ("cells") is bounded by its size, with a floor that no real
# manifest reaches (a 12 MB List of 40,000 Pods uses about 7M cells).
MAX_CELLS_PER_CHAR = 4
MIN_MAX_CELLS = 4_000_000

# -- numbers --------------------------------------------------------------------------------------
# The most digits of an integer anywhere pmanifest reads one (YAML, JSON, TOML, a saved command
# line): what Python converts to and from text (``sys.int_info.default_max_str_digits``), far
# beyond Kubernetes' int64 (19 digits). Longer text is refused before it is converted, in any
# base (a hex, octal or sexagesimal YAML integer as much as a decimal one).
MAX_INTEGER_DIGITS = 4300
INT64_MAX = 2**63 - 1  # Kubernetes integers (and a spec's quantities written as numbers)
INT64_MIN = -(2**63)
# A count read from a cluster file (GPUs, nodes): above what JSON holds exactly, it is no count.
MAX_COUNT = 2**53

# -- shell scripts (tree-sitter-bash, then a walk with the script's functions inlined) ----------
MAX_SHELL_NESTING = 150  # levels of syntax and of inlined calls (each is a few Python frames)
SHELL_STEPS_BASE = 5_000  # statements walked, inlined bodies included: this plus
SHELL_STEPS_PER_BYTE = 4  # SHELL_STEPS_PER_BYTE per byte (real scripts use under 1 per byte)
# What the walk may read, inlined function bodies and trap actions included: this many bytes
# plus SHELL_WALK_PER_BYTE per byte of the script (real scripts read each byte about once).
SHELL_WALK_BASE = 64 * 1024
SHELL_WALK_PER_BYTE = 8
MAX_TRAPS_FOLLOWED = 64  # traps whose following main-shell commands are kept
# tree-sitter's error recovery is quadratic on some broken text (60 KB of ``a=(`` took 15 s
# and more): its parse stops after this long plus so much per KiB of script (valid scripts
# parse in about a millisecond per 10 KiB).
SHELL_PARSE_SECONDS = 1.0
SHELL_PARSE_SECONDS_PER_KIB = 0.02
# a script up to this long is parsed whole, with no deadline: its worst case (2 KiB of
# ``a=(``) takes 0.05 s, a twentieth of the budget; and tree-sitter 0.26 keeps every bytes
# object a read callback returns (2 KB a pod in a tree of 20,000 files: 3 MiB of scripts)
SHELL_PARSE_WHOLE_BYTES = 2048

# -- templates (render; --templates are the user's code) ----------------------------------------
TEMPLATE_SECONDS = 5.0  # per object rendered (each template call), compiling included
MAX_TEMPLATE_OUTPUT = 2 * 1024 * 1024  # characters one template call renders
MAX_TEMPLATE_INT_BITS = 4096  # far above int64, far below a slow multiplication
TEMPLATE_MEMORY_HEADROOM = 256 << 20  # room for work, not data (outputs are capped above)

# -- policies (user JSON Schemas) ------------------------------------------------------------------
MAX_SCHEMA_EXPANDED = 100_000  # subschemas a schema expands to through its $refs
MAX_SCHEMA_DEPTH = 64  # levels of subschemas, through $refs too (validation recurses on them)
MAX_MESSAGE_FIELD = 1000  # characters of one value substituted into a policy's message
MAX_MESSAGE_WIDTH = 200  # the widest format spec a policy's message may ask for

# -- reports -------------------------------------------------------------------------------------
MAX_NODE_COLUMN = 63  # the node column of `cluster events` is at most this wide (longer names
#                       overflow their row instead of widening every row)
MAX_DIFF_LINES = 20_000  # render --check: lines a drift diff is computed over, each side;
#                          beyond, the diff shows the first difference and its context only


def _size(value: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if value >= 1 << shift and value % (1 << shift) == 0:
            return f"{value >> shift} {unit}"
    return f"{value:,}"


# (what is bounded, the bound) as docs/reference.md lists them
LIMITS: tuple[tuple[str, str], ...] = (
    ("bytes read from one input (file, FIFO, stdin, config, policy, template, cluster file)",
     _size(MAX_INPUT_BYTES)),
    ("bytes of a kustomization read by the patch search", _size(MAX_KUSTOMIZATION_BYTES)),
    ("directory entries counted to say what a walk that found nothing left out",
     f"{MAX_LEFT_OUT_ENTRIES:,}"),
    ("kustomizations read to find the labels they add to selectors",
     f"{MAX_KUSTOMIZATIONS_FOLLOWED:,}"),
    ("levels of nesting of a YAML document", f"{MAX_DEPTH}"),
    ("nodes copied by the aliases of one document", f"{MAX_ALIAS_EXPANSION:,}"),
    ("sum of the path lengths of a document's nodes",
     f"{MAX_CELLS_PER_CHAR} per character, at least {MIN_MAX_CELLS:,}"),
    ("digits of an integer (any base; YAML, JSON, TOML, command lines)",
     f"{MAX_INTEGER_DIGITS:,}"),
    ("a count in a cluster file (GPUs)", f"2^53 ({MAX_COUNT:,})"),
    ("levels of nesting of a shell script and its inlined calls", f"{MAX_SHELL_NESTING}"),
    ("statements a shell script's walk visits (functions inlined)",
     f"{SHELL_STEPS_PER_BYTE} per byte of the script + {SHELL_STEPS_BASE:,}"),
    ("bytes of commands a shell script's walk records (functions inlined)",
     f"{SHELL_WALK_PER_BYTE} per byte of the script + {_size(SHELL_WALK_BASE)}"),
    ("TERM traps of a script whose following commands are read", f"{MAX_TRAPS_FOLLOWED}"),
    ("time to parse one shell script",
     f"{SHELL_PARSE_SECONDS:g} s + {SHELL_PARSE_SECONDS_PER_KIB * 1000:g} ms per KiB"),
    ("time per object a template renders (compiling included)", f"{TEMPLATE_SECONDS:g} s"),
    ("characters one template call renders", _size(MAX_TEMPLATE_OUTPUT)),
    ("bits of an integer a template computes", f"{MAX_TEMPLATE_INT_BITS:,}"),
    ("memory a render's templates may add", _size(TEMPLATE_MEMORY_HEADROOM)),
    ("subschemas a policy schema expands to through $ref", f"{MAX_SCHEMA_EXPANDED:,}"),
    ("levels of subschemas of a policy schema (through $ref too)", f"{MAX_SCHEMA_DEPTH}"),
    ("characters of one value in a policy's message", f"{MAX_MESSAGE_FIELD:,}"),
    ("width of a format spec in a policy's message", f"{MAX_MESSAGE_WIDTH}"),
    ("width of the node column of `cluster events`", f"{MAX_NODE_COLUMN} characters"),
    ("lines `render --check` diffs in full, each side", f"{MAX_DIFF_LINES:,}"),
)


class TooLong(ValueError):
    """An integer of more than ``MAX_INTEGER_DIGITS`` digits."""

    def __init__(self) -> None:
        super().__init__(f"integer of more than {MAX_INTEGER_DIGITS:,} digits (the most "
                         "pmanifest reads)")


def bounded_integer(text: str, convert: Callable[[str], int]) -> int:
    """``convert(text)``, refused (TooLong) when ``text`` has more than
    ``MAX_INTEGER_DIGITS`` digits or letters (before converting: a sexagesimal conversion
    is quadratic) or the value more than that many decimal digits (a hex one can)."""
    if len(text) > MAX_INTEGER_DIGITS and \
            sum(c.isalnum() for c in text) > MAX_INTEGER_DIGITS + 1:  # + the 0x of a prefix
        raise TooLong()
    return checked_integer(convert(text))


def checked_integer(value: int) -> int:
    """``value``, or TooLong when it has more than ``MAX_INTEGER_DIGITS`` decimal digits."""
    if value.bit_length() > _SAFE_BITS and abs(value) >= _limit():
        raise TooLong()
    return value


_SAFE_BITS = int(MAX_INTEGER_DIGITS * 3.32)  # 2 ** this < 10 ** MAX_INTEGER_DIGITS


@functools.cache
def _limit() -> int:
    return int(10**MAX_INTEGER_DIGITS)


def too_big(limit: int) -> str:
    """Why an input over ``limit`` bytes is refused, in words that follow "cannot read: "."""
    if limit == MAX_INPUT_BYTES:
        return f"more than {MAX_INPUT_BYTES >> 20} MiB (the most pmanifest reads from one input)"
    return f"more than {_size(limit)}"
