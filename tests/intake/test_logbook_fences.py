"""A logbook cell's fences (`judging/intake/logbook/figures.py`): its figure, raw-data and output
fences and the scripts trackio recorded in fences titled with their names.

The fence patterns looked from every fence that is never closed to the end of the cell
(`^(```+)...\\n(.*?)^\\1$`): a cell of 8,000 lines of "~~~x" (40 KB) took 17 s, and as many
"~~~py title=a.py" lines 94 s, growing with the square of the cell. The inputs below are five
times larger: read once, they take milliseconds; read from every line, tens of minutes, past the
test's timeout (no elapsed time is asserted).
"""

from __future__ import annotations

import pytest

from judging.intake.logbook.figures import fences, script_bodies

#: Lines of an unclosed-fence attack: the work of a scan from every line to the end grows with
#: their square (25x the 8,000 lines measured above: about 7 minutes and 40 minutes).
ATTACK_LINES = 40_000


def test_fences_keep_their_language_body_and_order() -> None:
    body = ("text\n```html\n<img src='x'>\n```\n~~~raw\na,b\n1,2\n~~~  \n"
            "```` output\nloss=0.5\n```\nstill output\n````\n```\nno lang\n```\n")
    assert fences(body) == [("html", "<img src='x'>\n"), ("raw", "a,b\n1,2\n"),
                            ("output", "loss=0.5\n```\nstill output\n"), ("", "no lang\n")]


def test_an_unclosed_fence_is_no_block_and_the_later_ones_are_read() -> None:
    assert fences("```python\nx = 1\n") == []
    assert fences("```raw\nnever closed\n~~~output\nok\n~~~\n") == [("output", "ok\n")]
    assert fences("```PNG title=a\nx\n```") == [("png", "x\n")]  # closed at the text's end


def test_script_bodies_by_their_fence_titles() -> None:
    body = ("$ python train.py\n```python title=train.py\nprint(1)\n```\n"
            "```output\n```py title=not_a_script.py\n```\n"
            "~~~sh title=run.sh extra\necho hi\n~~~\n```python title=open.py\nx\n")
    assert script_bodies(body) == {"train.py": "print(1)\n", "run.sh": "echo hi\n"}


@pytest.mark.timeout(60)
def test_a_cell_of_unclosed_fences_is_read_once() -> None:
    # no "~~~" line closes them: each looked to the end for one
    attack = "~~~x\n" * ATTACK_LINES + "```html\n<img>\n```\n"
    assert fences(attack) == [("html", "<img>\n")]


@pytest.mark.timeout(60)
def test_a_cell_of_unclosed_script_fences_is_read_once() -> None:
    attack = "~~~py title=a.py\n" * ATTACK_LINES + "```sh title=b.sh\necho\n```\n"
    assert script_bodies(attack) == {"b.sh": "echo\n"}


def test_a_titled_fence_without_a_language_is_a_script() -> None:
    assert script_bodies("``` title=run.sh\necho\n```\n") == {"run.sh": "echo\n"}
