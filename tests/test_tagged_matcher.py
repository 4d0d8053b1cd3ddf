"""``TaggedMatcher`` against an independent oracle: the whole output language
written as one regex (text that holds no trigger nor exclude, then a triggered
section, ...) and judged by the ``regex`` package's partial matching. At every
step of random walks, every token of a small vocabulary whose pieces cross
every border (an end tag's last bytes and text after, a whole section in one
token) is compared; rollback and fork are checked too."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest
import regex

from structgen.structural_tag import StructuralTag, read_structural_tag
from structgen.tagged_matcher import TaggedMatcher
from structgen.tokenizer_info import TokenizerInfo

PIECES = [
    "<", "a", "b", ">", "/", "{", "}", "x", "y", "h", "!", "0", "1", "9", " ", "\n", "hello", "!!",
    "<a", "<a>", "</a>", "</", "a>", ">x", "</a>h", "9</a>", "1</a> <a>0</a>", ">!!", "<a>1", "}}y", "{{x}}", "{{", "}}",
    "<ab>", "ab", "b>", "</ab>", "</ab>!", ">\n", "12", "</b", "<a>12</a>",
]


def vocabulary() -> TokenizerInfo:
    return TokenizerInfo([p.encode() for p in PIECES] + [b""], stop_token_ids=[len(PIECES)], special_token_ids=[len(PIECES)])


def spec(at_least_one: bool = False, stop_after_first: bool = False) -> dict[str, Any]:
    return {"type": "structural_tag", "format": {
        "type": "triggered_tags", "triggers": ["<a", "{{"], "excludes": ["!!"],
        "at_least_one": at_least_one, "stop_after_first": stop_after_first,
        "tags": [
            {"type": "tag", "begin": "<a>", "content": {"type": "regex", "pattern": "[0-9]{1,3}"}, "end": "</a>"},
            {"type": "tag", "begin": "<ab>", "content": {"type": "regex", "pattern": "[xy]+"}, "end": "</ab>"},
            {"type": "tag", "begin": "{{", "content": {"type": "const_string", "value": "x"}, "end": "}}"},
        ]}}


def language(at_least_one: bool, stop_after_first: bool) -> str:
    text = r"(?:(?!<a|\{\{|!!)[\s\S])*"
    section = r"(?:<a(?:>[0-9]{1,3}</a>|b>[xy]+</ab>)|\{\{x\}\})"
    if stop_after_first:  # text, then the output ends with its first section (or with the text, unless at_least_one)
        return text + section if at_least_one else f"{text}(?:{section})?"
    if at_least_one:
        return f"{text}{section}(?:{text}{section})*{text}"
    return f"(?:{text}{section})*{text}"


def viable(pattern: str, text: str, complete: bool) -> bool:
    return regex.fullmatch(pattern, text, partial=not complete) is not None


CASES = [(False, False), (True, False), (False, True), (True, True)]


@pytest.mark.parametrize("at_least_one, stop_after_first", CASES)
def test_masks_equal_the_oracle_on_random_walks(at_least_one: bool, stop_after_first: bool) -> None:
    info = vocabulary()
    stop = info.stop_token_ids[0]
    tags = read_structural_tag(spec(at_least_one, stop_after_first))
    assert isinstance(tags, StructuralTag)
    pattern = language(at_least_one, stop_after_first)
    rng = random.Random(11)
    for walk in range(30):
        matcher = TaggedMatcher(tags, info)
        written = ""
        for _ in range(25):
            allowed = set(matcher.allowed_tokens())
            for token_id, piece in enumerate(PIECES + [""]):
                expected = viable(pattern, written, True) if token_id == stop else viable(pattern, written + piece, False)
                assert (token_id in allowed) == expected, (walk, written, piece)
                assert matcher.fork().accept_token(token_id) == expected, (walk, written, piece)
            if not allowed:
                break
            choice = rng.choice(sorted(allowed))
            assert matcher.accept_token(choice)
            if choice == stop:
                assert matcher.is_terminated()
                break
            written += PIECES[choice]


def test_rollback_and_fork_cross_sections() -> None:
    info = vocabulary()
    ids = {p: i for i, p in enumerate(PIECES)}
    tags = read_structural_tag(spec())
    assert isinstance(tags, StructuralTag)
    matcher = TaggedMatcher(tags, info)
    path = ["hello", "<a>1", "9</a>", " ", "{{x}}", "<a", ">", "12", "</a>h"]
    rows = []
    for piece in path:
        rows.append(matcher.allowed_tokens())
        assert matcher.accept_token(ids[piece]), piece
    assert matcher.sections() == 3
    fork = matcher.fork()
    matcher.rollback(6)  # back inside the first section
    assert matcher.allowed_tokens() == rows[3] and matcher.sections() == 1
    assert fork.sections() == 3 and fork.can_terminate()
    for piece, row in zip(path[3:], rows[3:]):
        assert matcher.allowed_tokens() == row
        assert matcher.accept_token(ids[piece])
    matcher.reset()
    assert matcher.allowed_tokens() == rows[0]


def test_json_sections_and_any_text() -> None:
    from structgen.generate import tokenizer_info_for

    import vocabularies

    info = tokenizer_info_for(vocabularies.deepseek())
    tags = read_structural_tag({"type": "structural_tag", "format": {"type": "triggered_tags", "triggers": ["<function="], "tags": [
        {"begin": "<function=get_weather>", "content": {"type": "json_schema", "json_schema": {
            "type": "object", "properties": {"city": {"enum": ["Paris", "Rome"]}}, "required": ["city"]}}, "end": "</function>"},
        {"begin": "<function=note>", "content": {"type": "any_text"}, "end": "</function>"}]}})
    assert isinstance(tags, StructuralTag)
    good = ('I will check. <function=get_weather>{"city": "Rome"}</function> and note it: '
            "<function=note>Rome {is} warm</function>. Done.")
    bad = ['<function=get_weather>{"city": "Oslo"}</function>', "<function=other>x</function>", "<function=note>x"]
    assert _walk(tags, info, good, complete=True)
    for text in bad:
        assert not _walk(tags, info, text, complete=True), text


def _walk(tags: StructuralTag, info: Any, text: str, complete: bool) -> bool:
    """Whether ``text``, tokenized by the real tokenizer and fed token by token, is
    taken (and, ``complete``, may stop there); every token checked against the mask."""
    import vocabularies

    tokenizer = vocabularies.deepseek()
    matcher = TaggedMatcher(tags, info)
    for token_id in tokenizer.encode(text, add_special_tokens=False):
        allowed = token_id in set(matcher.allowed_tokens())
        if matcher.accept_token(token_id) != allowed:
            raise AssertionError(f"the mask and accept_token disagree on {token_id}")
        if not allowed:
            return False
    return not complete or matcher.can_terminate()


@pytest.mark.parametrize(
    "bad, where",
    [
        ({"type": "structural_tag", "format": {"type": "triggered_tags", "triggers": [], "tags": []}}, "format.triggers"),
        ({"type": "structural_tag", "format": {"type": "triggered_tags", "triggers": ["<a"], "tags": [
            {"begin": "<b>", "content": {"type": "const_string", "value": "x"}, "end": "</b>"}]}}, "format.tags[0].begin"),
        ({"type": "structural_tag", "format": {"type": "triggered_tags", "triggers": ["<a", "<ab"], "tags": [
            {"begin": "<ab>", "content": {"type": "const_string", "value": "x"}, "end": "</b>"}]}}, "format.triggers[0]"),
        ({"type": "structural_tag", "format": {"type": "triggered_tags", "triggers": ["<a"], "tags": [
            {"begin": "<a>", "content": {"type": "json_schema", "json_schema": {"type": "nope"}}, "end": "</a>"}]}},
         "format.tags[0].content.json_schema"),
        ({"type": "structural_tag", "format": {"type": "token", "token": "<x>"}}, "format.type"),
        ({"type": "structural_tag", "structures": [{"begin": "<a>", "schema": {}}], "triggers": ["<a"]}, "structures[0].end"),
    ],
)
def test_a_structural_tag_that_cannot_be_built_names_the_place(bad: dict[str, Any], where: str) -> None:
    from structgen.structural_tag import StructuralTagError

    with pytest.raises(StructuralTagError) as raised:
        read_structural_tag(bad)
    assert raised.value.where == where, str(raised.value)
    assert re.match(re.escape(where), str(raised.value))


def test_a_token_the_section_could_leave_at_two_cuts_leaves_at_the_first() -> None:
    """End tags whose tails overlap (``aaa``): the section ends at the earliest
    completion, and the mask says what ``accept_token`` does."""
    pieces = ["<", "a", "x", "aab", "b"]
    info = TokenizerInfo([p.encode() for p in pieces] + [b""], stop_token_ids=[len(pieces)], special_token_ids=[len(pieces)])
    tags = read_structural_tag({"type": "structural_tag", "format": {"type": "triggered_tags", "triggers": ["<"], "excludes": ["ab"],
                                "tags": [{"begin": "<", "content": {"type": "regex", "pattern": "xa?"}, "end": "aaa"}]}})
    assert isinstance(tags, StructuralTag)
    matcher = TaggedMatcher(tags, info)
    assert matcher.accept_string("<xaa")
    allowed = set(matcher.allowed_tokens())
    for token_id in range(len(pieces) + 1):
        assert (token_id in allowed) == matcher.fork().accept_token(token_id), pieces[token_id] if token_id < len(pieces) else "stop"


def test_excludes_must_be_a_list() -> None:
    from structgen.structural_tag import StructuralTagError

    with pytest.raises(StructuralTagError) as raised:
        read_structural_tag({"type": "structural_tag", "format": {"type": "triggered_tags", "triggers": ["<a"], "excludes": "!!",
                             "tags": [{"begin": "<a>", "content": {"type": "const_string", "value": "x"}, "end": "</a>"}]}})
    assert raised.value.where == "format.excludes"
