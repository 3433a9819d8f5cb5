"""Property: any bytes, split into documents at random, through ``pmanifest lint -``."""

from __future__ import annotations

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pmanifest.cli.main import main
from tests.hypothesis_profiles import examples

_SEPARATORS = st.sampled_from([b"---\n", b"\n---\n", b"--- ", b"...\n", b"---\r\n", b"\n"])
_PIECES = st.binary(max_size=120) | st.sampled_from([
    b"apiVersion: v1\nkind: Pod\n", b"kind: Job\napiVersion: batch/v1\n", b"spec: {",
    b"&a [*a]", b"{{ .Values.x }}", b"!!python/object/apply:os.system [true]", b"\xef\xbb\xbf",
    b"\x00", b"\xff", b"- ", b"  ", b"\t", b"<<: *a", b"%YAML 1.1\n",
])


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(_PIECES, _SEPARATORS), max_size=8))
def test_random_bytes_split_into_documents_never_crash_lint(
    parts: list[tuple[bytes, bytes]],
) -> None:
    raw = b"".join(piece + separator for piece, separator in parts)
    result = CliRunner().invoke(main, ["lint", "--allow-empty", "-"], input=raw)
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{type(result.exception).__name__}: {result.exception}")
    assert result.exit_code in (0, 1), result.stderr
    assert "Traceback" not in result.stdout + result.stderr
