"""``format`` values as regexes over the string's JSON text, as JSON Schema defines
them by their RFCs' grammars.

Every character these formats allow is printable ASCII, written by ``json.dumps``
as itself but for ``"`` and ``\\`` (only in an e-mail's quoted local part, spelled
``\\"`` and ``\\\\`` here); other spellings of the same text (``\\/``, ``\\u0041``)
are refused, as for ``pattern``. Quoted strings in the RFCs' ABNF are
case-insensitive, and so are these (``[ipv6:::1]`` is an address literal), but
for a duration's designators (below).
"""

from __future__ import annotations

IPV4 = r"(?:(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
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


def _duration() -> str:
    """RFC 3339 appendix A: ``P`` then a date part (days, months or years, larger
    units first) with an optional time part, a time part alone, or weeks alone.
    Designators in capitals only, as ISO 8601 writes them and Pydantic reads them
    (the ABNF's quoted letters would allow ``p1d`` too)."""
    digits = "[0-9]+"
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
    quoted = rf'\\"(?:{quoted_char}|\\\\(?:{quoted_char}|\\"|\\\\))*\\"'  # both escaped in JSON text
    sub_domain = "[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
    literal = rf"\[(?:{IPV4}|[iI][pP][vV]6:{IPV6})\]"
    return rf"(?:{atom}(?:\.{atom})*|{quoted})@(?:{sub_domain}(?:\.{sub_domain})*|{literal})"


def _uri(reference: bool) -> str:
    """RFC 3986: a URI (section 3), or with ``reference`` a URI or a relative
    reference (section 4.1), each part by its ABNF; a host is an IP literal or a
    reg-name (which every IPv4 address also is)."""
    unreserved = r"A-Za-z0-9\-._~"
    sub_delims = r"!$&'()*+,;="
    pct = "%[0-9A-Fa-f]{2}"
    pchar = f"(?:[{unreserved}{sub_delims}:@]|{pct})"
    segment = f"{pchar}*"
    segment_nz = f"{pchar}+"
    future = rf"[vV][0-9A-Fa-f]+\.[{unreserved}{sub_delims}:]+"
    host = rf"(?:\[(?:{IPV6}|{future})\]|(?:[{unreserved}{sub_delims}]|{pct})*)"
    authority = rf"(?:(?:[{unreserved}{sub_delims}:]|{pct})*@)?{host}(?::[0-9]*)?"
    after_path = rf"(?:\?(?:{pchar}|[/?])*)?(?:#(?:{pchar}|[/?])*)?"
    absolute = f"/(?:{segment_nz}(?:/{segment})*)?"
    hier = f"(?://{authority}(?:/{segment})*|{absolute}|{segment_nz}(?:/{segment})*)?"
    uri = f"[A-Za-z][A-Za-z0-9+\\-.]*:{hier}{after_path}"
    if not reference:
        return uri
    no_colon = f"(?:[{unreserved}{sub_delims}@]|{pct})+"
    relative = f"(?://{authority}(?:/{segment})*|{absolute}|{no_colon}(?:/{segment})*)?"
    return f"(?:{uri}|{relative}{after_path})"


FORMATS = {
    # RFC 3339 full-date: years 0001-9999 (Python's and Pydantic's dates have no
    # year 0), each month's own days, February 29 only in leap years
    "date": r"(?:(?:[1-9][0-9]{3}|0[1-9][0-9]{2}|00[1-9][0-9]|000[1-9])-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])"
    r"|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))"
    r"|(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][48]|[2468]0|[13579][26])00)-02-29)",
    "time": r"(?:[01][0-9]|2[0-3]):[0-5][0-9]:(?:[0-5][0-9]|60)(?:\.[0-9]+)?(?:[zZ]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])",
    "uuid": r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",  # RFC 4122
    "ipv4": IPV4,
    "ipv6": IPV6,
    "duration": _duration(),
    "hostname": f"{LABEL}(?:\\.{LABEL})*",
    "email": _email(),
    "uri": _uri(reference=False),
    "uri-reference": _uri(reference=True),
}
FORMATS["date-time"] = FORMATS["date"] + "[tT]" + FORMATS["time"]

LEAP_SECOND = "|60)"
"""Where ``time`` allows second 60; ``Options(leap_seconds=False)`` takes it out."""

NOTES = {
    "date": "years 0001-9999: RFC 3339 allows 0000, Python and Pydantic do not",
    "time": "second 60 passes at any minute, not only as a leap second",
    "date-time": "years 0001-9999; second 60 passes at any minute, not only as a leap second",
}
"""What an enforced format's regex says beyond its RFC."""

WIDER = {
    "hostname": "labels of 1-63 characters checked; a name over 253 characters in all is not refused",
}
"""Formats whose regex takes more than the RFC (reported approximated)."""
