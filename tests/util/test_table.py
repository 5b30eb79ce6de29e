from toolproxy.util.table import cell, format_table


def test_cell_formats_values_on_one_line():
    assert cell(None) == ""
    assert cell({"a": [1, "é"]}) == '{"a":[1,"é"]}'
    assert cell(1.50) == "1.5"
    assert cell(2.0) == "2"
    assert cell("a\n  b") == "a b"
    assert cell("x" * 10, width=5) == "xxxx…"


def test_format_table_aligns_columns():
    out = format_table(["name", "n"], [["get_weather", 3], ["x", None]])
    lines = out.splitlines()
    assert lines[0] == "name         n"
    assert lines[1] == "-----------  -"
    assert lines[2] == "get_weather  3"
    assert lines[3] == "x"
