"""Files with syntax errors: one readable diagnostic per error, and the statements around it still parse."""

from __future__ import annotations

from graphlsp.syntax.document import SyntaxDocument

HEADER = '<ir_version: 8, opset_import: ["" : 18]>\n'


def lines_of(doc: SyntaxDocument) -> list[int]:
    return [doc.lines.position(p.start)[0] + 1 for p in doc.problems]


def outputs(doc: SyntaxDocument) -> list[str]:
    graph = doc.model.graph
    assert graph is not None
    return [n.outputs[0].value for n in graph.nodes if n.outputs and n.outputs[0] is not None]


def test_three_independent_errors_give_three_diagnostics_and_keep_the_nodes_between() -> None:
    text = HEADER + (
        "g (float[N, 4] x) => (float[N, 4] y) {\n"  # 2
        "  a = Relu (x\n"  # 3: missing ')'
        "  b = Sigmoid (a)\n"  # 4
        "  c = Add (a b)\n"  # 5: missing ','
        "  d = Mul (b, b)\n"  # 6
        "  e = Tanh <alpha = > (d)\n"  # 7: missing attribute value
        "  f = Neg (e)\n"  # 8
        "  y = Abs (f)\n"  # 9
        "}\n"
    )
    doc = SyntaxDocument(text)
    assert lines_of(doc) == [3, 5, 7]
    assert all(p.code == "GL101" for p in doc.problems)
    # every well-formed node around the errors reaches the tree (a cut `Relu (x` is closed and kept too)
    for name in ["a", "b", "d", "f", "y"]:
        assert name in outputs(doc)


def test_missing_close_paren_message_names_the_op_and_where_it_opened() -> None:
    text = HEADER + "g (float[N] x) => (float[N] y) {\n  a = Relu (x\n  y = Abs (a)\n}\n"
    doc = SyntaxDocument(text)
    [problem] = doc.problems
    assert problem.message == "expected ')' to close the inputs of Relu opened at 3:12, found 'y'"
    assert doc.lines.position(problem.start) == (2, 13)  # just after `x`, where the ')' belongs
    assert [m for m, _, _ in problem.related] == ["opened here"]
    assert outputs(doc) == ["a", "y"]


def test_missing_open_paren() -> None:
    doc = SyntaxDocument(HEADER + "g (float[N] x) => (float[N] y) {\n  a = Relu x\n  y = Abs (a)\n}\n")
    [problem] = doc.problems
    assert problem.message == "expected '(' and the inputs of Relu"
    assert outputs(doc) == ["y"]


def test_unclosed_attribute_list_stops_at_the_next_statement() -> None:
    doc = SyntaxDocument(HEADER + "g (float[N] x) => (float[N] y) {\n  a = Softmax <axis = 1 (x)\n  y = Abs (a)\n}\n")
    [problem] = doc.problems
    assert problem.message.startswith("expected '>' to close the attributes of Softmax opened at 3:15")
    assert outputs(doc) == ["y"]


def test_missing_closing_brace_of_the_graph() -> None:
    doc = SyntaxDocument(HEADER + "g (float[N] x) => (float[N] y) {\n  a = Relu (x)\n  y = Abs (a)\n")
    [problem] = doc.problems
    assert "'}'" in problem.message
    assert outputs(doc) == ["a", "y"]


def test_protobuf_text_format_gets_one_clear_diagnostic() -> None:
    text = 'ir_version: 8\ngraph {\n  node { input: "x" output: "y" op_type: "Relu" }\n}\n'
    doc = SyntaxDocument(text)
    [problem] = doc.problems
    assert problem.code == "GL102"
    assert "protobuf text format" in problem.message


def test_empty_and_comment_only_files() -> None:
    for text in ["", "   \n", "# just a comment\n"]:
        [problem] = SyntaxDocument(text).problems
        assert problem.code == "GL101" and "empty file" in problem.message


def test_printer_ellipsis_is_explained() -> None:
    doc = SyntaxDocument(HEADER + "g () => (float[2] y) {\n  y = Constant <value = float[2] {...}> ()\n}\n")
    [problem] = doc.problems
    assert problem.code == "GL104"
    assert doc.text[problem.start : problem.end] == "..."


def test_unterminated_string_and_stray_characters() -> None:
    doc = SyntaxDocument(HEADER + 'g (float[N] x) => (float[N] y) {\n  y = Abs ("x)\n}\n')
    assert doc.problems and doc.problems[0].code == "GL101"
    doc = SyntaxDocument(HEADER + "g (float[N] x) => (float[N] y) {\n  y = Abs (x) $\n}\n")
    assert [p.message for p in doc.problems] == ["unexpected character '$'"]


def test_semantic_token_errors_keep_the_statement() -> None:
    doc = SyntaxDocument('<ir_version: 8, opset_import: ["" : 18], colour: "red">\ng (float[N] x) => (float[N] y) {\n  y = Abs <k: integer = 1> (x)\n}\n')
    assert [p.code for p in doc.problems] == ["GL103", "GL103"]
    assert "unknown model header key 'colour'" in doc.problems[0].message
    assert "unknown attribute type 'integer'" in doc.problems[1].message
    assert outputs(doc) == ["y"]


def _literal_model(n: int, stray: str = "", broken_node: bool = False) -> str:
    numbers = [f"{k % 97 / 7:.5f}" for k in range(n)]
    if stray:
        numbers[n // 2] += stray
    node = "y = Add (x, w" if broken_node else "y = Add (x, w)"
    return (f'<ir_version: 10, opset_import: ["" : 21]>\ng (float[{n}] x) => (float[{n}] y)\n'
            f"<float[{n}] w = {{{', '.join(numbers)}}}>\n{{\n  {node}\n  z = Relu (y)\n}}\n")  # fmt: skip


def test_the_cutter_reads_a_run_of_numbers_as_one_token() -> None:
    """Recovering from one error in a large text costs about what its clean parse does: the cutter makes a token
    per run of numbers on a line, not per number (a 30 MB converted model: 7 s and 1.2 GB, from 0.7 s, 180 MB)."""
    from graphlsp.syntax.recovery import tokenize

    text = _literal_model(20_000, broken_node=True)
    toks = tokenize(text)
    assert len(toks) < 80
    run = next(t for t in toks if t.kind == "n" and t.end - t.start > 1000)
    assert run.text == "0.00000" and text[run.end] == "}"
    doc = SyntaxDocument(text)
    assert [(p.message, text[: p.start].count("\n")) for p in doc.problems] == [
        ("expected ')' to close the inputs of Add opened at 5:11, found 'z'", 4)]  # fmt: skip
    assert doc.model.graph is not None and [n.op.op_type for n in doc.model.graph.nodes] == ["Add", "Relu"]


def test_a_stray_character_in_a_long_literal_is_found_without_lexing_every_number(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The list is not one NUMBERS token because of the stray character: the error is where the token-by-token
    parse stops, found by one regex instead of a million tokens (three times: the full parse, the statement's, and
    lark's to describe it)."""
    import graphlsp.syntax.lexer as lexer

    made = [0]
    make_token = lexer.make_token

    def counted(*a):  # type: ignore[no-untyped-def]
        made[0] += 1
        return make_token(*a)

    text = _literal_model(20_000, stray=" $")
    monkeypatch.setattr(lexer, "make_token", counted)
    doc = SyntaxDocument(text)
    assert [(p.message, p.start) for p in doc.problems] == [("unexpected character '$'", text.index("$"))]
    assert made[0] < 500
    short = _literal_model(8, stray=" $")  # below NUMBERS' 16 numbers: token by token, the same answer
    assert [(p.message, p.start) for p in SyntaxDocument(short).problems] == [
        ("unexpected character '$'", short.index("$"))]  # fmt: skip


def test_a_broken_document_checks_its_model_header_as_a_whole_one_does() -> None:
    """Recovery parses the header as a statement of its own: its keys are checked there too (an edit that breaks
    a later line must not hide the header's GL103, which the incremental reparse keeps)."""
    good = '<\n  ir_version: 9, pset_import: ["" : 18]\n>\nmain (float[N] x) => (float[N] y) {\n  y = Relu (x)\n}\n'
    broken = good.replace("  y = Relu", "(  y = Relu")
    for text in (good, broken):
        problems = [(p.code, p.message) for p in SyntaxDocument(text).problems if p.code == "GL103"]
        assert problems == [("GL103", "unknown model header key 'pset_import'")], text
