"""``--extract NAME=xpath:EXPR`` runs over the page as browsers parse it.

The manual promises "XPath 1.0 over the page as browsers parse it", so XPath
must see the tree the HTML standard's tree builder makes, not lxml's HTML
parser's: an implied ``<tbody>``, the implied ``html``/``head``/``body``, a
``<p>`` closed by a block, misnested formatting elements re-opened (the adoption
agency), a table's stray content moved before it. Each case's answer is what a
browser's ``document.evaluate`` gives for the same source.
"""

from __future__ import annotations

import pytest
from selectolax.lexbor import LexborHTMLParser

from crawler.page.custom_extract import extract_values, parse_rule

CASES = [
    # an implied tbody: the manual's own example
    ("<table id=specs><tr><td>a</td></tr><tr><td>b</td></tr></table>",
     '//table[@id="specs"]/tbody/tr[2]/td', "b"),
    # html, head and body implied around bare content
    ("<title>T</title><p>one", "/html/body/p", "one"),
    ("<title>T</title><p>one", "/html/head/title", "T"),
    # a <p> is closed by a block: the div is the p's sibling, not its child
    ("<p>one<div>two</div>", "count(//p/div)", "0"),
    ("<p>one<div>two</div>", "name(//p/following-sibling::*[1])", "div"),
    # misnested formatting: <b><i>x</b>y</i> is b>i>x, then i>y
    ("<b><i>x</b>y</i>", "count(//i)", "2"),
    ("<b><i>x</b>y</i>", "string(//body/i)", "y"),
    # text in a table but not in a cell is moved out, before the table
    ("<table><tr><td>c</td></tr>stray</table>", "normalize-space(/html/body/text()[1])",
     "stray"),
    # a list item closes the one before it
    ("<ul><li>a<li>b</ul>", "count(//li/li)", "0"),
    ("<ul><li>a<li>b</ul>", "count(//ul/li)", "2"),
    # attributes and comments as browsers keep them
    ('<a href="/x" data-n="1">link<!-- note --></a>', "//a/@data-n", "1"),
]


@pytest.mark.parametrize(("html", "expression", "expected"), CASES)
def test_xpath_sees_the_browsers_tree(html: str, expression: str, expected: str) -> None:
    rule = parse_rule(f"v=xpath:{expression}")
    ((_name, value),) = extract_values((rule,), LexborHTMLParser(html), html)
    assert value == expected


def test_a_tree_deeper_than_python_recursion_is_carried_over() -> None:
    html = "<div>" * 5000 + "deep" + "</div>" * 5000
    rule = parse_rule("v=xpath:count(//div)")
    ((_name, value),) = extract_values((rule,), LexborHTMLParser(html), html)
    assert int(value) > 500  # lexbor caps the depth it builds; what it built is there
