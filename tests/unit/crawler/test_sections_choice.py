"""--section and --sections auto, as pure choices over URLs."""

from __future__ import annotations

import pytest

from crawler.cli.failure import Failure
from crawler.cli.sections import Sections, choose_auto, parse_sections

ROOT = "http://s.test/"


def _auto(urls: list[str], root: str = ROOT) -> Sections:
    sections = Sections()
    choose_auto(sections, lambda: iter(urls), root)
    return sections


def test_the_first_matching_pattern_wins_and_the_rest_is_other() -> None:
    sections = parse_sections(["news=/blog/news/*", "blog=/blog/*", "q=*?page=*"], "none")
    assert sections is not None
    assert sections.section_of(ROOT + "blog/news/1") == "news"
    assert sections.section_of(ROOT + "blog/2") == "blog"
    assert sections.section_of(ROOT + "shop?page=2") == "q"
    assert sections.section_of(ROOT + "about") == "other"
    assert sections.order == ["news", "blog", "q", "other"]


def test_no_option_no_sections() -> None:
    assert parse_sections([], "none") is None


@pytest.mark.parametrize("value", ["x", "=/x/*", "X=/x/*", "x=x/*", "x=re:["])
def test_a_bad_section_is_a_usage_error(value: str) -> None:
    with pytest.raises(Failure) as failed:
        parse_sections([value], "none")
    assert failed.value.code == 2


def test_auto_takes_the_segments_of_one_percent_or_more_rounded_as_people_read_it() -> None:
    urls = [ROOT] + [f"{ROOT}s0000/p{n}.html" for n in range(99)] + [
        f"{ROOT}s{k:04d}/p{n}.html" for k in range(1, 100) for n in range(100)]
    urls += [f"{ROOT}tiny/p{n}.html" for n in range(50)]  # 0.5 %: with the rest
    sections = _auto(urls)
    assert len(sections.segments) == 100  # s0000's 99 of 10,050 pages is 0.99 %, "1.0 %"
    assert sections.section_of(f"{ROOT}tiny/p1.html") == "other"
    assert sections.section_of(ROOT) == "other"
    assert sections.order[-1] == "other"


def test_auto_puts_a_landing_page_with_its_folder_and_names_files_safely() -> None:
    urls = [f"{ROOT}Blog%20Posts/{n}" for n in range(5)] + [
        f"{ROOT}2024/{n}" for n in range(5)] + [ROOT + "Blog%20Posts.html", ROOT]
    sections = _auto(urls)
    assert sections.section_of(ROOT + "Blog%20Posts/1") == "blog-posts"
    assert sections.section_of(ROOT + "Blog%20Posts.html") == "blog-posts"
    assert sections.section_of(ROOT + "2024/1") == "s-2024"


def test_auto_reads_segments_under_the_sitemaps_directory() -> None:
    root = "http://s.test/docs/"
    urls = [f"{root}a/{n}" for n in range(3)] + [f"{root}b/{n}" for n in range(3)]
    sections = _auto(urls, root)
    assert set(sections.segments.values()) == {"a", "b"}


def test_auto_with_one_big_segment_is_one_sitemap() -> None:
    sections = _auto([f"{ROOT}docs/{n}" for n in range(100)] + [f"{ROOT}x{n}" for n in range(9)])
    assert not sections.split
    assert "no two first path segments" in sections.note
