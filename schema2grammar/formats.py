"""``format`` values as regexes over the string's JSON text, as JSON Schema defines
them by their RFCs' grammars.

Every character these formats allow is printable ASCII (but a URI template's
non-ASCII ones, and a regex's: any), each matched in every spelling the grammar
takes (``spellings``): the formats that hold ``/``, ``"``, ``\\`` or non-ASCII
characters (e-mails, URIs, URI templates) are written over the decoded text and
respelled (``spellings.spell_regex``: ``http:\\/\\/`` is ``http://``), the others
hold only characters with one spelling.
Quoted strings in the RFCs' ABNF are case-insensitive, and so are these
(``[ipv6:::1]`` is an address literal), but for a duration's designators (below).
"""

from __future__ import annotations

import calendar
import datetime
import re

from schema2grammar import ecma, regexes, spellings

DEC_OCTET = "(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
"""0-255 without leading zeros."""

IPV4 = rf"(?:{DEC_OCTET}\.){{3}}{DEC_OCTET}"
"""RFC 2673 dotted-quad, no leading zeros."""


def _ipv6() -> str:
    """RFC 4291 section 2.2 (RFC 3986's IPv6address): eight groups, one ``::`` for
    a run of zero groups, the last two groups as an IPv4 address."""
    group = "[0-9a-fA-F]{1,4}"
    last = f"(?:{group}:{group}|{IPV4})"
    forms = [f"(?:{group}:){{6}}{last}", f"::(?:{group}:){{5}}{last}"]
    tails = [f"(?:{group}:){{4}}{last}", f"(?:{group}:){{3}}{last}", f"(?:{group}:){{2}}{last}", f"{group}:{last}",
             last, group, ""]
    for before, tail in enumerate(tails):  # up to `before` + 1 groups ahead of the ::
        forms.append(f"(?:(?:{group}:){{0,{before}}}{group})?::{tail}")
    return "(?:" + "|".join(forms) + ")"


IPV6 = _ipv6()


def duration(most_digits: int | None = None) -> str:
    """RFC 3339 appendix A: ``P`` then a date part (days, months or years, larger
    units first) with an optional time part, a time part alone, or weeks alone.
    Designators in capitals only, as ISO 8601 writes them and Pydantic reads them
    (the ABNF's quoted letters would allow ``p1d`` too). ``most_digits``: the
    longest number (``Options.duration_digits``)."""
    digits = "[0-9]+" if most_digits is None else f"[0-9]{{1,{most_digits}}}"
    second = f"{digits}S"
    minute = f"{digits}M(?:{second})?"
    hour = f"{digits}H(?:{minute})?"
    time = f"T(?:{hour}|{minute}|{second})"
    day = f"{digits}D"
    month = f"{digits}M(?:{day})?"
    year = f"{digits}Y(?:{month})?"
    return f"P(?:(?:{day}|{month}|{year})(?:{time})?|{time}|{digits}W)"


LABEL = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
"""An RFC 1123 host name label: letters, digits and inner hyphens, 1-63 of them."""


def _email() -> str:
    """RFC 5321 section 4.1.2's Mailbox: a dot-string or a quoted string, ``@``, a
    domain or an IPv4 or IPv6 address literal (no general address literal: no
    other tag is registered)."""
    atom = r"[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~]+"
    quoted_char = r"[ !#-\[\]-~]"  # printable ASCII but the quote and the backslash
    quoted = rf'"(?:{quoted_char}|\\(?:{quoted_char}|"|\\))*"'  # over the decoded text: spelled later
    sub_domain = "[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
    literal = rf"\[(?:{IPV4}|[iI][pP][vV]6:{IPV6})\]"
    return spellings.spell_regex(rf"(?:{atom}(?:\.{atom})*|{quoted})@(?:{sub_domain}(?:\.{sub_domain})*|{literal})")


_UNRESERVED = r"A-Za-z0-9\-._~"
_SUB_DELIMS = r"!$&'()*+,;="
_PCT = "%[0-9A-Fa-f]{2}"
_PCHAR = f"(?:[{_UNRESERVED}{_SUB_DELIMS}:@]|{_PCT})"
_SEGMENT = f"{_PCHAR}*"
_SEGMENT_NZ = f"{_PCHAR}+"
_USERINFO = rf"(?:[{_UNRESERVED}{_SUB_DELIMS}:]|{_PCT})*@"
_AFTER_PATH = rf"(?:\?(?:{_PCHAR}|[/?])*)?(?:#(?:{_PCHAR}|[/?])*)?"
_ABSOLUTE = f"/(?:{_SEGMENT_NZ}(?:/{_SEGMENT})*)?"
_SCHEME = r"[A-Za-z][A-Za-z0-9+\-.]*"
SCHEME = re.compile(_SCHEME)
"""An RFC 3986 scheme (``fullmatch`` it)."""


def _uri(reference: bool) -> str:
    """RFC 3986: a URI (section 3), or with ``reference`` a URI or a relative
    reference (section 4.1), each part by its ABNF; a host is an IP literal or a
    reg-name (which every IPv4 address also is)."""
    future = rf"[vV][0-9A-Fa-f]+\.[{_UNRESERVED}{_SUB_DELIMS}:]+"
    host = rf"(?:\[(?:{IPV6}|{future})\]|(?:[{_UNRESERVED}{_SUB_DELIMS}]|{_PCT})*)"
    authority = rf"(?:{_USERINFO})?{host}(?::[0-9]*)?"
    hier = f"(?://{authority}(?:/{_SEGMENT})*|{_ABSOLUTE}|{_SEGMENT_NZ}(?:/{_SEGMENT})*)?"
    uri = f"{_SCHEME}:{hier}{_AFTER_PATH}"
    if not reference:
        return spellings.spell_regex(uri)
    no_colon = f"(?:[{_UNRESERVED}{_SUB_DELIMS}@]|{_PCT})+"
    relative = f"(?://{authority}(?:/{_SEGMENT})*|{_ABSOLUTE}|{no_colon}(?:/{_SEGMENT})*)?"
    return spellings.spell_regex(f"(?:{uri}|{relative}{_AFTER_PATH})")


def _uri_template() -> str:
    """RFC 6570 section 2: literals (any character but controls, space, ``"'%<>\\^`{|}``,
    percent-encoded triplets aside) and expressions: ``{``, an optional operator,
    variable names (letters, digits, ``_``, percent-encoded; dots between), each with
    a prefix length below 10000 or an explode, ``}``. Non-ASCII characters are its
    ``ucschar`` and ``iprivate``, as themselves or escaped (``spellings``)."""
    planes = "".join(f"\\U{plane:04x}0000-\\U{plane:04x}fffd" for plane in range(1, 14))
    wide = f"\\u00a0-\\ud7ff\\ue000-\\ufdcf\\ufdf0-\\uffef{planes}\\U000e1000-\\U000efffd\\U000f0000-\\U0010fffd"
    literal = rf"(?:[!#$&(-;=?-\[\]_a-z~{wide}]|{_PCT})"  # brackets escaped: lark reads \x5d as ]
    varchar = rf"(?:[A-Za-z0-9_]|{_PCT})"
    varspec = rf"{varchar}(?:\.?{varchar})*(?::[1-9][0-9]{{0,3}}|\*)?"
    return spellings.spell_regex(rf"(?:{literal}|\{{[+#./;?&=,!@|]?{varspec}(?:,{varspec})*\}})*")


SPECIAL_SCHEMES = ("ftp", "file", "http", "https", "ws", "wss")
"""The WHATWG URL standard's special schemes: a URL of one always has a host
(``file``'s may be empty), and its host is a domain or an IP address."""


def whatwg_uri(schemes: list[str] | None = None, host_required: bool = False) -> str:
    """RFC 3986 URIs that a WHATWG URL parser (Pydantic's ``AnyUrl`` and its
    kin) reads too, with one of ``schemes`` (lower case; any scheme when None),
    and with ``host_required`` a host in every one (as the special schemes' have).

    The standard takes more than RFC 3986 in some places (it percent-encodes
    what RFC 3986 refuses) and less in others; this is the RFC's grammar less
    the latter: no ``[v1.x]`` host (IPvFuture), a port of at most 65535, the
    special schemes only with ``//`` and a host (``file``: a host alone, possibly
    empty, or an absolute path), their host an IPv6 or dotted-quad IPv4 address or
    a domain with no percent-encoding and no ``xn--`` label (punycode that would
    have to decode) whose last label is no number (which would make it an IPv4
    address to read), and another scheme's authority empty or with a host."""
    port = r"(?::0*(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4})?)?"
    special_host = rf"(?:\[{IPV6}\]|{IPV4}|{_domain()})"
    special = f"://(?:{_USERINFO})?{special_host}{port}(?:/{_SEGMENT})*"
    if host_required:
        file = f"://{special_host}(?:/{_SEGMENT})*"
    else:
        file = rf":(?://(?:{special_host})?(?:/{_SEGMENT})*|{_ABSOLUTE})"
    opaque_host = rf"(?:\[{IPV6}\]|(?:[{_UNRESERVED}{_SUB_DELIMS}]|{_PCT})+)"
    if host_required:
        other = f"//(?:{_USERINFO})?{opaque_host}{port}(?:/{_SEGMENT})*"
    else:
        authority = f"//(?:(?:{_USERINFO})?{opaque_host}{port})?(?:/{_SEGMENT})*"
        other = f"(?:{authority}|{_ABSOLUTE}|{_SEGMENT_NZ}(?:/{_SEGMENT})*)?"
    forms = []
    for scheme in sorted(set(SPECIAL_SCHEMES) if schemes is None else set(schemes)):
        if scheme not in SPECIAL_SCHEMES:
            forms.append(f"{_insensitive(scheme)}:{other}")
        else:
            forms.append(_insensitive(scheme) + (file if scheme == "file" else special))
    if schemes is None:
        forms.append(f"{_scheme_except(SPECIAL_SCHEMES)}:{other}")
    return spellings.spell_regex(f"(?:{'|'.join(forms)}){_AFTER_PATH}")


def _domain() -> str:
    """A special URL's domain as a WHATWG parser reads it unchanged: labels of
    unreserved characters and sub-delimiters, none starting ``xn--``, and a last
    one (before an optional final dot) that is not a number: not all digits,
    not ``0x`` and hex digits."""
    chars = _chars(_UNRESERVED + _SUB_DELIMS) - {"."}
    any_char = _class(chars)
    label = f"(?:{_not_xn(chars)})"
    non_digit = _class(chars - set("0123456789xX"))
    non_hex = _class(chars - set("0123456789abcdefABCDEF"))
    last = [
        f"{non_digit}{any_char}*",
        _not_xn(chars, nonempty=True),  # from x or X: not a number
        f"[0-9]+{non_digit}{any_char}*",
        f"(?:[0-9]*[1-9][0-9]*|0[0-9]+)[xX]{any_char}*",  # digits other than "0", then x: not hex
        f"0[xX][0-9a-fA-F]*{non_hex}{any_char}*",
    ]
    return rf"(?:{label}\.)*(?:{'|'.join(last)})\.?"


def _not_xn(chars: set[str], nonempty: bool = False) -> str:
    """Labels of ``chars`` not starting ``xn--`` (case-insensitive); with
    ``nonempty``, only those starting with ``x``."""
    any_char = _class(chars)
    not_dash = f"{_class(chars - {'-'})}{any_char}*"
    after = f"(?:{_class(chars - set('nN'))}{any_char}*|[nN](?:{not_dash}|-(?:{not_dash})?)?)?"
    from_x = f"[xX]{after}"
    if nonempty:
        return from_x
    return f"(?:{_class(chars - set('xX'))}{any_char}*|{from_x})?"


def _insensitive(word: str) -> str:
    """``word`` in any case: ``[hH][tT]...`` for its letters."""
    return "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else _class({c}) for c in word)


def _scheme_except(words: tuple[str, ...]) -> str:
    """A scheme (RFC 3986) that is none of ``words`` (lower case) in any case."""
    first = _chars("A-Za-z")
    rest = _chars(r"A-Za-z0-9+\-.")

    def other_than(prefixes: list[str], allowed: set[str], ended: bool) -> str:
        # strings that, after a common prefix, leave every word in ``prefixes`` (their rests)
        forms = [] if ended else [""]
        heads = {p[0] for p in prefixes if p}
        forms.append(_class(allowed - {h.lower() for h in heads} - {h.upper() for h in heads}) + _class(rest) + "*")
        for head in sorted(heads):
            tails = [p[1:] for p in prefixes if p and p[0] == head]
            forms.append(_insensitive(head) + other_than(tails, rest, "" in tails))
        return "(?:" + "|".join(forms) + ")"

    return other_than(list(words), first, True)


def _chars(spec: str) -> set[str]:
    """The characters of a regex class body like ``A-Za-z0-9\\-._~``."""
    (members,) = ecma.parse(f"[{spec}]").children
    return {chr(code) for low, high in members.ranges for code in range(low, high + 1)}


def _class(chars: set[str]) -> str:
    """A regex class of ``chars``, runs written as ranges."""
    return ecma.python_set(ecma.normalize([(ord(c), ord(c)) for c in chars]))


_MONTH_DAYS = (
    "(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)"
    "|02-(?:0[1-9]|1[0-9]|2[0-8]))"
)
"""Every month and day of a year but February 29."""


def date_range(low: datetime.date, high: datetime.date) -> str | None:
    """RFC 3339 full-dates from ``low`` to ``high`` (both included; None when none):
    the days of the first and last years month by month, the years between
    whole, with February 29 in their leap years."""
    if low > high:
        return None
    if low.year == high.year:
        return _within_year(low, high)
    parts = [_within_year(low, datetime.date(low.year, 12, 31))]
    if high.year - low.year > 1:
        first, last = low.year + 1, high.year - 1
        years = "|".join(regexes.digits_between(f"{first:04d}", f"{last:04d}"))
        parts.append(f"(?:{years})-{_MONTH_DAYS}")
        leap = _leap_years(first, last)
        if leap:
            parts.append(f"(?:{'|'.join(leap)})-02-29")
    parts.append(_within_year(datetime.date(high.year, 1, 1), high))
    return "(?:" + "|".join(parts) + ")"


def _within_year(low: datetime.date, high: datetime.date) -> str:
    """The dates from ``low`` to ``high``, of one year."""
    months = []
    for month in range(low.month, high.month + 1):
        first = low.day if month == low.month else 1
        last = high.day if month == high.month else calendar.monthrange(low.year, month)[1]
        days = "|".join(regexes.digits_between(f"{first:02d}", f"{last:02d}"))
        months.append(f"{month:02d}-(?:{days})")
    return f"{low.year:04d}-(?:{'|'.join(months)})"


def _leap_years(first: int, last: int) -> list[str]:
    """The leap years from ``first`` to ``last``, as alternatives: whole centuries
    by their last two digits, the others one by one."""
    out = []
    for century in range(first // 100, last // 100 + 1):
        start, stop = max(first, century * 100), min(last, century * 100 + 99)
        if (start, stop) == (century * 100, century * 100 + 99):
            ends = "0[48]|[2468][048]|[13579][26]" + ("|00" if century % 4 == 0 else "")
            out.append(f"{century:02d}(?:{ends})")
        else:
            out += [f"{year:04d}" for year in range(start, stop + 1) if calendar.isleap(year)]
    return out


REGEX_SYNTAX = (
    r"^(?:\||\((?:\?[^\\])?"  # a bar; a group's opening, with its prefix's first character
    r"|(?:[^\\\[()|*+?]|\\[\s\S]|\[\^?\]?(?:[^\\\]]|\\[\s\S])*\]|\))(?:[*+?][?+]?)?)*$"  # an atom, a quantifier
    r"|^\(\?[aiLmsux]*x[aiLmsux]*\)[\s\S]*$"  # Python's verbose mode: comments and spaces anywhere
)
"""``format: regex`` as a regular language that holds every pattern ECMA-262
(with Annex B) or Python's ``re`` reads: an atom (a character, an escape, a
character class, a group's closing) may take a quantifier, and a lazy or
possessive mark after it; the start, a bar or a group's opening takes none; an
escape needs its character, a class its ``]`` (a ``]`` first in it may be
Python's literal or ECMA's end). Parentheses are not counted, nor escapes,
group names or braced quantifiers read: refused are ``*``, ``a**``, ``(+a)``,
``a|?``, ``\\`` at the end and ``[a``."""

FORMATS = {
    # RFC 3339 full-date: years 0001-9999 (Python's and Pydantic's dates have no
    # year 0), each month's own days, February 29 only in leap years
    "date": f"(?:(?:[1-9][0-9]{{3}}|0[1-9][0-9]{{2}}|00[1-9][0-9]|000[1-9])-{_MONTH_DAYS}"
    r"|(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][48]|[2468]0|[13579][26])00)-02-29)",
    "time": r"(?:[01][0-9]|2[0-3]):[0-5][0-9]:(?:[0-5][0-9]|60)(?:\.[0-9]+)?(?:[zZ]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])",
    "uuid": r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",  # RFC 4122
    "ipv4": IPV4,
    "ipv6": IPV6,
    "duration": duration(),
    "hostname": f"{LABEL}(?:\\.{LABEL})*",
    "email": _email(),
    "uri": _uri(reference=False),
    "uri-reference": _uri(reference=True),
    "uri-template": _uri_template(),
}
FORMATS["date-time"] = FORMATS["date"] + "[tT]" + FORMATS["time"]
FORMATS["regex"] = ecma.json_string_regex(REGEX_SYNTAX)

LEAP_SECOND = "|60)"
"""Where ``time`` allows second 60; ``Options(leap_seconds=False)`` takes it out."""

NOTES = {
    "uri whatwg": "RFC 3986 URIs that a WHATWG URL parser (Pydantic's) reads too: ports up to 65535, no IPvFuture "
    "host, http/https/ws/wss/ftp/file only with their host; some it reads are refused (hosts that are numbers)",
    "date": "years 0001-9999: RFC 3339 allows 0000, Python and Pydantic do not",
    "time": "second 60 passes at any minute, not only as a leap second",
    "date-time": "years 0001-9999; second 60 passes at any minute, not only as a leap second",
}
"""What an enforced format's regex says beyond its RFC."""

WIDER = {
    "hostname": "labels of 1-63 characters checked; a name over 253 characters in all is not refused",
    "regex": "a quantifier with nothing to repeat, an escape or a character class left open are refused; unbalanced "
    "parentheses, unknown escapes and group names pass",
}
"""Formats whose regex takes more than the RFC (reported approximated)."""
