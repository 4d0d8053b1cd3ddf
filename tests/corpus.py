"""Varied texts for checking token bytes against real tokenizers.

Deterministic (seeded), and built to hit what tokenizers get wrong: JSON with
escapes, CJK, emoji sequences, combining marks, code with tabs and newlines,
leading and trailing whitespace, and random code points from many scripts.
"""

from __future__ import annotations

import json
import random

CJK = [
    "日本語のテキストです。",
    "東京都渋谷区",
    "中文文本测试，包括标点符号。",
    "繁體中文與簡體中文",
    "한국어 텍스트입니다.",
    "カタカナとひらがな",
    "漢字仮名交じり文",
    "价格：￥１２３．４５",
    "「引用」と『二重引用』",
    "第三章　全角スペース",
]
EMOJI = [
    "😀",
    "👨\u200d👩\u200d👧\u200d👦",
    "👍🏽",
    "🇫🇷🇯🇵",
    "1️⃣",
    "❤️",
    "🏳️\u200d🌈",
    "🧑🏿\u200d💻",
    "🫠🫥🪿",
    "😀😃😄😁😆",
]
COMBINING = [
    "e\u0301",
    "Tiếng Việt có dấu",
    "नमस्ते दुनिया",
    "مَرْحَبًا بِالْعَالَمِ",
    "שָׁלוֹם עוֹלָם",
    "Z\u0351\u0313\u0308a\u0337\u0316l\u0335\u035cg\u0334o\u0336",
    "n\u0303o\u0308",
    "ﬁ ligature and Å vs A\u030a",
    "ä vs a\u0308",
    "กรุงเทพมหานคร",
]
CODE = [
    "def f(x):\n\treturn x + 1\n",
    "if (a) {\n\tb();\n} else {\r\n\tc();\r\n}",
    "func main() {\n\tfmt.Println(\"hi\")\n}\n",
    "SELECT *\n  FROM t\n WHERE x = 'a\\'b';",
    "\tfor i in range(10):\n\t\tprint(i)\n\n",
    "    four spaces\n\ttab\n  \t mixed",
    "#include <stdio.h>\nint main(void) { return 0; }\n",
    "x = {'k': [1, 2, 3]}  # comment\n",
    "<div class=\"a\">\n  <span>text</span>\n</div>",
    "a\\b\\\\c\\n\\t\\u0041",
]
WORDS = ["hello", "world", "json", "value", "naïve", "café", "Straße", "façade", "ÆØÅ", "日本", "🙂", "x"]
SCRIPTS = [
    (0x20, 0x7E),  # ASCII
    (0xA0, 0x24F),  # Latin-1 and extended Latin
    (0x370, 0x3FF),  # Greek
    (0x400, 0x4FF),  # Cyrillic
    (0x591, 0x5F4),  # Hebrew
    (0x600, 0x6FF),  # Arabic
    (0x900, 0x97F),  # Devanagari
    (0x300, 0x36F),  # combining marks
    (0x3040, 0x30FF),  # kana
    (0x4E00, 0x9FFF),  # CJK ideographs
    (0xAC00, 0xD7A3),  # Hangul
    (0x1F300, 0x1FAFF),  # emoji
    (0x2000, 0x206F),  # general punctuation (zero-width joiner, thin spaces)
    (0x10000, 0x1007F),  # Linear B (4-byte UTF-8, rare in any vocabulary)
]


def _random_json_value(rng: random.Random, depth: int = 0) -> object:
    choice = rng.randrange(7 if depth < 3 else 4)
    if choice == 0:
        return rng.randint(-(10**12), 10**12)
    if choice == 1:
        return rng.choice([0.5, -1e-7, 3.14159, 2.5e300, -0.0])
    if choice == 2:
        return rng.choice([True, False, None])
    if choice == 3:
        return _random_string(rng)
    if choice == 4:
        return [_random_json_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {_random_string(rng): _random_json_value(rng, depth + 1) for _ in range(rng.randrange(4))}


def _random_string(rng: random.Random) -> str:
    parts = [rng.choice(WORDS + ['"', "\\", "\n", "\t", "\u0000", "\u001f", "/", "\u2028"]) for _ in range(rng.randrange(1, 5))]
    return "".join(parts)


def _random_codepoints(rng: random.Random, count: int) -> str:
    out = []
    for _ in range(count):
        low, high = rng.choice(SCRIPTS)
        out.append(chr(rng.randint(low, high)))
    return "".join(out)


def texts(seed: int = 20261122) -> list[str]:
    """About 350 texts; every category above appears many times."""
    rng = random.Random(seed)
    out: list[str] = []
    for _ in range(90):
        value = _random_json_value(rng)
        indent = rng.choice([None, None, 2, 4, "\t"])
        out.append(json.dumps(value, ensure_ascii=rng.random() < 0.3, indent=indent))
    for group in (CJK, EMOJI, COMBINING, CODE):
        out.extend(group)
        for _ in range(25):
            picked = rng.sample(group, 2)
            joiner = rng.choice([" ", "", "\n", "\t", ", "])
            out.append(joiner.join(picked))
    for _ in range(40):  # leading and trailing whitespace
        core = rng.choice(WORDS + CJK + EMOJI + CODE)
        left = rng.choice(["", " ", "  ", "\t", "\n", " \n ", "\r\n", "   \t"])
        right = rng.choice(["", " ", "  ", "\t", "\n", "\n\n", " \t\n"])
        out.append(left + core + right)
    out.extend([" ", "  ", "\n", "\t", " \t \n", "       x"])
    for _ in range(60):
        out.append(_random_codepoints(rng, rng.randint(1, 40)))
    return out
