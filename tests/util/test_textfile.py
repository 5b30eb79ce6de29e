"""toolproxy.util.textfile: a named file's text, or why not, without naming it again."""

from __future__ import annotations

import pytest

from toolproxy.util.textfile import Unreadable, read_text


def test_text_is_read_as_utf8(tmp_path):
    path = tmp_path / "a.yaml"
    path.write_bytes("città: ok\n".encode())
    assert read_text(path) == "città: ok\n" and read_text(str(path)) == "città: ok\n"


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (lambda p: None, "No such file or directory"),
        (lambda p: p.mkdir(), "Is a directory"),
        (
            lambda p: p.write_bytes(b"id: \xd0\x28\n"),
            "not UTF-8 text (invalid continuation byte at byte 4)",
        ),
    ],
)
def test_why_a_file_cannot_be_read_does_not_name_it(tmp_path, make, why):
    path = tmp_path / "cases.yaml"
    make(path)
    with pytest.raises(Unreadable) as info:
        read_text(path)
    assert str(info.value) == why
