"""Newline-delimited JSON bodies: toolproxy.wire.ndjson."""

from toolproxy.wire.ndjson import is_ndjson, ndjson_stream


def test_told_by_content_type_or_where_expected_by_shape():
    body = b'{"a": 1}\n{"b": 2}\n'
    assert is_ndjson("application/x-ndjson; charset=utf-8", b"")
    assert not is_ndjson("application/json", body)
    assert is_ndjson("application/json", body, expected=True)
    assert not is_ndjson(None, b'{\n  "a": 1\n}\n', expected=True)  # pretty JSON is one object
    assert not is_ndjson(None, b'{"a": 1}\n', expected=True)


def test_lines_decoded_blank_ones_skipped_the_cut_and_bad_ones_noted():
    stream = ndjson_stream(b'{"a": 1}\n\n[1]\n{"b": 2}\n{"c"', ended=True)
    assert stream.objects == [{"a": 1}, {"b": 2}]
    assert stream.events == 4 and not stream.ended  # no newline after the last line
    assert stream.notes == [
        "stream cut in the middle of a line",
        "1 line(s) not JSON (line 3: expected a JSON object, got list)",
    ]
    whole = ndjson_stream(b'{"a": 1}\n', ended=True)
    assert whole.ended and whole.notes == []
