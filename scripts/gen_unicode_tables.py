#!/usr/bin/python3
"""Writes src/text/unicode_data.h: the compact Unicode tables of src/text/unicode.cpp (character classes, case
mapping, canonical decompositions and combining classes), from Python's unicodedata; and
src/text/hf_unicode_data.h: the full-range tables of the Hugging Face tokenizers (src/text/hf_unicode.cpp: general
categories, lower case, canonical decompositions and combining classes over all of Unicode; only the separately
loaded module of the Hugging Face models links them).

    /usr/bin/python3 scripts/gen_unicode_tables.py            # rewrites src/text/unicode_data.h
    /usr/bin/python3 scripts/gen_unicode_tables.py --check    # exits 1 when the committed header differs

Coverage (the WebAssembly modules have a hard size budget, so the tables cover what the translators can use):
  - classes and case: U+0000-U+052F (Latin, IPA, spacing modifiers, combining diacritics, Greek, Cyrillic),
    U+1DC0-U+206F (combining supplement, Latin Extended Additional, Greek Extended, general punctuation),
    U+20D0-U+20FF (combining marks for symbols), U+3000-U+303F (CJK punctuation), U+FF00-U+FF65 (full-width
    forms); every other code point is classed by text::classify() (a word character → an uncased letter);
  - canonical decompositions: every character of U+0000-U+052F and U+1E00-U+1FFF that has one (Latin, Greek and
    Cyrillic letters with combining marks); Hangul syllables are computed, not stored;
  - canonical combining classes: U+0300-U+036F, U+0483-U+0487, U+1DC0-U+1DFF, U+20D0-U+20F0 (other marks count as
    class 0).
"""
import os
import sys
import unicodedata as U

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, 'src', 'text', 'unicode_data.h')
OUT_HF = os.path.join(ROOT, 'src', 'text', 'hf_unicode_data.h')

CLASS_RANGES = [(0x0000, 0x0530), (0x1DC0, 0x2070), (0x20D0, 0x2100), (0x3000, 0x3040), (0xFF00, 0xFF66)]
DECOMP_RANGES = [(0x0000, 0x0530), (0x1E00, 0x2000)]
CCC_RANGES = [(0x0300, 0x0370), (0x0483, 0x0488), (0x1DC0, 0x1E00), (0x20D0, 0x20F1)]

# Class codes (src/text/unicode.h, enum class Cat).
OTHER, UPPER, LOWER, LETTER, MARK, NUMBER, OPEN, INITIAL, FINAL = range(9)
FALLBACK = 15  # outside the tables: text::classify() decides
# Case kinds: 0 uncased, 1 upper (maps to lower), 2 lower (maps to upper), 3 alternating pairs upper/lower.
UNCASED, CASE_UPPER, CASE_LOWER, CASE_ALT = range(4)


def char_class(c):
    g = U.category(chr(c))
    if g == 'Lu':
        return UPPER
    if g == 'Ll':
        return LOWER
    if g[0] == 'L':
        return LETTER
    if g[0] == 'M':
        return MARK
    if g[0] == 'N':
        return NUMBER
    return {'Ps': OPEN, 'Pi': INITIAL, 'Pf': FINAL}.get(g, OTHER)


def case_of(c):
    """(kind, delta): JavaScript's test (toLowerCase() != toUpperCase(): cased; == toUpperCase(): upper) with full
    mappings, and the one-character mapping if it keeps the UTF-8 length (else delta None: left alone)."""
    ch = chr(c)
    lo, up = ch.lower(), ch.upper()
    if lo == up:
        return UNCASED, None
    kind, target = (CASE_UPPER, lo) if ch == up else (CASE_LOWER, up)
    if len(target) == 1 and len(target.encode()) == len(ch.encode()):
        return kind, ord(target) - c
    return kind, None


def class_runs():
    """Runs (start, class, case kind, delta) over U+0000-U+FFFF; unassigned code points join the run before."""
    info = {}
    for a, b in CLASS_RANGES:
        for c in range(a, b):
            if U.category(chr(c)) != 'Cn':
                info[c] = (char_class(c),) + case_of(c)
    runs = []
    c = 0
    while c < 0x10000:
        if c not in info:
            covered = any(a <= c < b for a, b in CLASS_RANGES)
            if not covered and (not runs or runs[-1][1] != FALLBACK):
                runs.append((c, FALLBACK, UNCASED, None))
            c += 1
            continue
        x = info[c]
        # Alternating upper/lower pairs (Āā Ăă …): at least four characters in a row.
        j = c
        while j + 1 in info and ((info[j][1:] == (CASE_UPPER, 1) and info[j + 1][1:] == (CASE_LOWER, -1)) or
                                 (info[j][1:] == (CASE_LOWER, -1) and info[j + 1][1:] == (CASE_UPPER, 1))) \
                and info[j][0] in (UPPER, LOWER) and info[j + 1][0] in (UPPER, LOWER):
            j += 1
        if j - c >= 3:
            # The run's parity: the character at the run's start is upper or lower case.
            runs.append((c, info[c][0], CASE_ALT, 0 if info[c][1] == CASE_UPPER else 1))
            c = j + 1
            continue
        if not runs or runs[-1][1:] != x or runs[-1][2] == CASE_ALT:
            runs.append((c,) + x)
        c += 1
    return runs


def decompositions():
    out = []
    for a, b in DECOMP_RANGES:
        for c in range(a, b):
            d = U.decomposition(chr(c))
            if d and not d.startswith('<'):
                out.append((c, [int(x, 16) for x in d.split()]))
    return out


ATTR_COMMENT = (
    'Per run: class (bits 0-3), case kind (bits 4-5: 0 uncased, 1 upper, 2 lower, 3 alternating pairs),\n'
    '// bits 6-15: for kinds 1/2, 1 + index into kCaseDelta (0: no mapping of the same UTF-8 length); for kind 3, the\n'
    "// parity of the run's first character (0 upper, 1 lower).")
SECOND_COMMENT = ('Second code point: index into kComposeSecond (bits 0-4; 31: a singleton decomposition), bit 5: '
                  'excluded\n// from composition.')


def table(ctype, name, values, per_line=16, comment=''):
    lines = [f'// {comment}'] if comment else []
    lines.append(f'inline constexpr {ctype} {name}[] = {{')
    for i in range(0, len(values), per_line):
        lines.append('    ' + ', '.join(str(v) for v in values[i:i + per_line]) + ',')
    lines.append('};')
    return '\n'.join(lines)


# General categories of src/text/hf_unicode.h (enum class Gc), in this order.
HF_GC = ['Cn', 'Lu', 'Ll', 'Lt', 'Lm', 'Lo', 'Mn', 'Mc', 'Me', 'Nd', 'Nl', 'No', 'Pc', 'Pd', 'Ps', 'Pe', 'Pi', 'Pf',
         'Po', 'Sm', 'Sc', 'Sk', 'So', 'Zs', 'Zl', 'Zp', 'Cc', 'Cf', 'Cs', 'Co']
# Word_Break MidLetter / MidNumLet / Single_Quote: case-ignorable besides the categories Mn Me Cf Lm Sk.
HF_IGNORABLE_EXTRA = [0x27, 0x2E, 0x3A, 0xB7, 0x387, 0x55F, 0x5F4, 0x2018, 0x2019, 0x2024, 0x2027, 0xFE13, 0xFE52,
                      0xFE55, 0xFF07, 0xFF0E, 0xFF1A]


def hf_tables():
    """Text of hf_unicode_data.h."""
    gc_start, gc_code = [], []
    for c in range(0x110000):
        g = HF_GC.index(U.category(chr(c)))
        cased = U.category(chr(c)) in ('Lu', 'Ll', 'Lt') or chr(c).lower() != chr(c) or chr(c).upper() != chr(c)
        ign = U.category(chr(c)) in ('Mn', 'Me', 'Cf', 'Lm', 'Sk') or c in HF_IGNORABLE_EXTRA
        code = g | (32 if cased else 0) | (64 if ign else 0)
        if not gc_code or gc_code[-1] != code:
            gc_start.append(c)
            gc_code.append(code)
    lower_from, lower_to = [], []
    for c in range(0x110000):
        lo = chr(c).lower()
        if lo != chr(c) and len(lo) == 1:
            lower_from.append(c)
            lower_to.append(ord(lo))
    dec_cp, dec_off, pool = [], [], []
    for c in range(0x110000):
        if 0xAC00 <= c < 0xAC00 + 11172:
            continue
        d = U.normalize('NFD', chr(c))
        if d != chr(c):
            dec_cp.append(c)
            dec_off.append(len(pool))
            pool.extend(ord(x) for x in d)
    dec_off.append(len(pool))
    ccc = []
    for c in range(0x110000):
        k = U.combining(chr(c))
        if k:
            if ccc and ccc[-1][1] == c and ccc[-1][2] == k:
                ccc[-1][1] = c + 1
            else:
                ccc.append([c, c + 1, k])
    flat = [v for r in ccc for v in r]
    text = f'''// Generated by scripts/gen_unicode_tables.py from Python's unicodedata (Unicode {U.unidata_version}). Do not edit.
// Layout: src/text/hf_unicode.cpp reads these tables.
#pragma once

#include <cstdint>

namespace attnlens::text::hf_unicode_data {{

{table('std::uint32_t', 'kGcStart', gc_start, comment='Runs over U+0000-U+10FFFF: first code point of each run (ascending).')}

{table('std::uint8_t', 'kGcCode', gc_code, 24, comment='Per run: bits 0-4 the general category (hf_unicode.h Gc), bit 5 cased, bit 6 case-ignorable.')}

{table('std::uint32_t', 'kLowerFrom', lower_from, comment='Characters whose lower case is one other character (ascending)...')}

{table('std::uint32_t', 'kLowerTo', lower_to, comment='... and that character.')}

{table('std::uint32_t', 'kDecompCp', dec_cp, comment='Characters with a canonical decomposition (Hangul syllables are computed), ascending.')}

{table('std::uint16_t', 'kDecompOffset', dec_off, comment='Their full decompositions: kDecompPool[kDecompOffset[i], kDecompOffset[i + 1]).')}

{table('std::uint32_t', 'kDecompPool', pool)}

{table('std::uint32_t', 'kCcc', flat, 3, comment='Canonical combining classes: [first, end, class] per run of non-zero classes.')}

}}  // namespace attnlens::text::hf_unicode_data
'''
    return text, len(gc_start), len(lower_from), len(dec_cp), len(ccc)


def main():
    runs = class_runs()
    deltas = sorted({r[3] for r in runs if r[2] != CASE_ALT and r[3] is not None})
    assert len(deltas) < 1023
    attrs = []
    for start, cls, kind, d in runs:
        if kind == CASE_ALT:
            code = d  # parity
        else:
            code = 0 if d is None else deltas.index(d) + 1
        attrs.append(cls | kind << 4 | code << 6)
    decs = decompositions()
    seconds = sorted({v[1] for _, v in decs if len(v) == 2})
    assert len(seconds) < 31
    dec_delta, dec_first, dec_second = [], [], []
    prev = 0
    for c, v in decs:
        dec_delta.append(c - prev)
        prev = c
        dec_first.append(v[0])
        if len(v) == 1:
            dec_second.append(31)  # a singleton: never composed
        else:
            code = seconds.index(v[1])
            if U.normalize('NFC', chr(v[0]) + chr(v[1])) != chr(c):
                code |= 32  # excluded from composition (e.g. U+0344, a non-starter decomposition)
            dec_second.append(code)
    ccc_ranges, ccc_values = [], []
    for a, b in CCC_RANGES:
        ccc_ranges += [a, b, len(ccc_values)]
        ccc_values += [U.combining(chr(c)) for c in range(a, b)]
    text = f'''// Generated by scripts/gen_unicode_tables.py from Python's unicodedata (Unicode {U.unidata_version}); do not edit.
// Regenerate: /usr/bin/python3 scripts/gen_unicode_tables.py. Coverage (the rest is classed by text::classify()):
//   classes and case: {', '.join(f'U+{a:04X}-U+{b - 1:04X}' for a, b in CLASS_RANGES)};
//   canonical decompositions: {', '.join(f'U+{a:04X}-U+{b - 1:04X}' for a, b in DECOMP_RANGES)} (Latin, Greek and Cyrillic letters
//   with combining marks; Hangul syllables are computed);
//   combining classes: {', '.join(f'U+{a:04X}-U+{b - 1:04X}' for a, b in CCC_RANGES)} (other marks count as class 0).
// Layout: src/text/unicode.cpp reads these tables.
#pragma once

#include <cstdint>

namespace attnlens::text::unicode_data {{

{table('std::uint16_t', 'kClassStart', [r[0] for r in runs], comment='Runs over U+0000-U+FFFF: first code point of each run (ascending).')}

{table('std::uint16_t', 'kClassAttr', attrs, comment=ATTR_COMMENT)}

{table('std::int16_t', 'kCaseDelta', deltas, comment='Case mapping deltas (target - code point).')}

{table('std::uint16_t', 'kDecompGap', dec_delta, 24, comment='Canonical decompositions, ascending: code point minus the previous one.')}

{table('std::uint16_t', 'kDecompFirst', dec_first, comment='First code point of each decomposition.')}

{table('std::uint8_t', 'kDecompSecond', dec_second, 24, comment=SECOND_COMMENT)}

{table('std::uint16_t', 'kComposeSecond', seconds, comment='The second code points of the decompositions.')}

{table('std::uint16_t', 'kCccRange', ccc_ranges, 3, comment='Combining classes: [first, end, offset into kCccValue] per range.')}

{table('std::uint8_t', 'kCccValue', ccc_values, 24)}

}}  // namespace attnlens::text::unicode_data
'''
    hf_text, *hf_counts = hf_tables()
    if '--check' in sys.argv:
        stale = []
        for path, content in ((OUT, text), (OUT_HF, hf_text)):
            with open(path, encoding='utf-8') as f:
                if f.read() != content:
                    stale.append(path)
        print(f'{", ".join(stale)} differs: regenerate it' if stale else 'up to date')
        sys.exit(1 if stale else 0)
    with open(OUT, 'w', encoding='utf-8') as f:
        f.write(text)
    with open(OUT_HF, 'w', encoding='utf-8') as f:
        f.write(hf_text)
    print(f'{OUT_HF}: {hf_counts[0]} category runs, {hf_counts[1]} lower-case mappings, {hf_counts[2]} decompositions, '
          f'{hf_counts[3]} combining-class runs')
    print(f'{OUT}: {len(runs)} class runs, {len(deltas)} case deltas, {len(decs)} decompositions, '
          f'{len(ccc_values)} combining classes')


if __name__ == '__main__':
    main()
