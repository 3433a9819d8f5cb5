# ruff: noqa: B018, F821
"""Names vulture cannot see used (``tests/test_code_quality.py``): each is read by a framework
or spelled in a file that is not Python. vulture reads this file as code that uses them."""

# click: option callbacks and the classes a group makes its subcommands with
_.callback
_.command_class
_.group_class
# the file protocol of io.writing.ClosedStdout, read by click and print
_.encoding
_.writable
# Jinja's sandbox reads intercepted_binops; RE2's options read log_errors
_.intercepted_binops
_.log_errors
# spelled in templates/supervisor.sh; tests/preemption checks the script against it
UNEXPECTED_TERM_EXIT
# callback signatures fixed by their callers (Jinja's finalize, signal handlers, tree-sitter's
# read and progress callbacks)
eval_ctx
signum
point
has_error
# shown in docs/reference.md's "Hostile input" section; tests/test_limits.py keeps the two equal
LIMITS
