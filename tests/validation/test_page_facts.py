"""The page reader (``read_page``) finds the tags and text Python's own HTML parser finds:
every page the build writes, in its docs and as mkdocs published it, reads the same
claims, caveats and text both ways."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from sitegen.commands.build import build_site, render_site
from sitegen.validation.page_facts import PageFacts, _ClaimReader, read_page
from tests.builtsites import reusing_renders
from tests.sitefixtures import PROJECT, publishable_campaign
from tests.statistics.test_quality_records import quality_plan


class _ReadByHtmlParser(HTMLParser):
    """The reader fed by ``html.parser``'s tags and text instead of its own."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.reader = _ClaimReader()
        self._in_raw_text = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values: dict[str, str] = {}
        for name, value in attrs:
            values.setdefault(name, value or "")
        self.reader._start(tag, values)
        self._in_raw_text = tag in ("script", "style")

    def handle_endtag(self, tag: str) -> None:
        self.reader._end(tag)
        self._in_raw_text = False

    def handle_data(self, data: str) -> None:
        if not self._in_raw_text:
            self.reader._text(data)


def _by_html_parser(page: str) -> PageFacts:
    parser = _ReadByHtmlParser()
    parser.feed(page)
    parser.close()
    reader = parser.reader
    return PageFacts(reader.claims, reader.page_caveats, "\n".join(reader.text))


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, str]:
    """Every page of a site of the hostile campaign and a quality campaign: the docs
    pages the build checks and the HTML pages mkdocs made of them."""
    root = tmp_path_factory.mktemp("page-facts")
    publishable_campaign(root / "data", hostile=True)
    publishable_campaign(root / "data", quality_plan().model_copy(update={"name": "quality"}))
    with reusing_renders():  # the build renders the docs once
        docs = render_site(root / "data", PROJECT).docs
        build_site(root / "data", root / "site", PROJECT, version="v1")
    found = {path: page.decode("utf-8") for path, page in docs.items() if path.endswith(".md")}
    published = (root / "site").resolve().rglob("*.html")
    return found | {str(path): path.read_text(encoding="utf-8") for path in published}


@pytest.mark.slow  # reads published pages
def test_pages_read_as_html_parser_reads_them(pages):
    assert len(pages) > 40
    claims = 0
    for path, page in pages.items():
        ours, reference = read_page(page), _by_html_parser(page)
        assert ours == reference, path
        claims += len(ours.claims)
    assert claims > 100


@pytest.mark.parametrize(
    "page",
    [
        '<p data-claim="a">1<br/>2<span data-caveat="C-X"/>3</p><p data-claim="b">4</p>',
        "<div><!-- <b data-claim='c'> --><B DATA-CLAIM=\"d\" title='x > y'>5</B></div>",
        '<script>if (a<b) {"<p data-claim=e>"}</script><style>p>b{}</style><i>6</i>',
        '<details><summary data-caveat="C-A">s</summary><p data-caveat="C-B">h</p></details>',
        "<template><p data-caveat='C-T'>t</p></template><p hidden data-caveat=C-H>&amp;7</p>",
        "<!DOCTYPE html><?xml x?><p data-claim=f data-caveat=C-Y>&lt;8&#x39;</p>",
        "<p data-claim=\"g&amp;h\" data-caveat='C-&#88;' data-caveat=C-Z>9</p>",
    ],
)
def test_markup_reads_as_html_parser_reads_it(page):
    assert read_page(page) == _by_html_parser(page)
