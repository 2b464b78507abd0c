#!/usr/bin/env node
// Writes tests/cpp/text_input_cases.json: the JavaScript text rules of wasm/pipelines/input.js (prepareSource,
// splitSentences, restoreCase) run over tricky strings, for tests/cpp/test_text_input.cpp to compare the C++ ones
// (src/text/normalize, sentences, recase) against. Indices are UTF-16 string indices, as JavaScript counts them.
//   node scripts/gen_text_cases.mjs            # rewrites the fixture
//   node scripts/gen_text_cases.mjs --check    # exits 1 when the committed fixture differs
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { prepareSource, restoreCase, splitSentences } from '../wasm/pipelines/input.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.join(ROOT, 'tests/cpp/text_input_cases.json');

const STRINGS = [
  'Ein Hund rennt über die grüne Wiese.',
  'Ein Hund rennt u\u0308ber die gru\u0308ne Wiese.',
  'Ein\u00A0Hund rennt\u202Füber die\u2007Wiese.',
  '„Der Hund“ und ‚die Katze‘ spielen im Ga\u0308rten.',
  'Ein Hund rennt. Eine Katze schläft! Wer lacht? „Ich“, sagt er… Dann geht er.',
  'Ich kaufe z. B. Äpfel usw. und gehe zu Dr. Müller in Nr. 5. Es kostet 3.5 Euro. Am 1. Mai nicht.',
  'Er sagte: „Komm!“ Dann ging er. Das ist z.B. gut.',
  'wie geht es dir? mir geht es gut',
  'Zeile eins ohne Punkt\n\nZeile zwei',
  'Zeile eins.\r\n \t\r\nZeile zwei\n\n\nZeile drei.\r\rNoch.',
  '  Ein Satz.\u00A0Noch einer.  ',
  ' \n\t ',
  '',
  'Er ist 30. Sie ist 25. Wir kommen am 3. Mai. Dann A. Merkel und (Prof. Dr. Schmidt) usw. Ende.',
  "Das war's. 'Wirklich'?! Wirklich?! Ja... „Nein.“ Doch.) Aber.] (Neu.) «Gut.» »Schön.« Ende",
  'Fahr zum Bhf. Dann geht es weiter. Ca. zehn Minuten. Vgl. oben. ETC. Ende',
  'Sie sagte „Hallo.“ Er sagte ‚Tschüss.‘ Dann ‚Gut‘. Ende.',
  'Café crème, naïve, Ångström: Cafe\u0301 cre\u0300me, nai\u0308ve, A\u030Angstro\u0308m.',
  'Vietnamese: Vie\u0323\u0302t Nam, vie\u0302\u0323t, \u1EC7.',
  'Ελληνικά: α\u0301λφα, Ω\u0313\u0342. Кириллица: и\u0306, е\u0308ж. Ёлка.',
  'Hangul: \u1100\u1161\u11A8 \uAC00\u11A8 한국어.',
  'Emoji 😀 und 👍🏽 vor u\u0308 und 𝔘.',
  'q\u0307 und u\u0308: a mark NFC keeps and one it composes.',
  'a\u0328\u0301 o\u031B\u0323 s\u0323\u0307 d\u0307\u0323.',
  '\u0301 leading mark, then u\u0308.',
  'Die Straße ist groß. Er heißt Weiß.',
  'ICH HABE KEINE ZEIT!',
  'ich habe keine zeit',
  '„ICH HABE ZEIT“, SAGT ER.',
  '12 UHR',
  'STRASSE',
  'Ich habe keine zeit',
  'A',
  'ß',
  '123 !?',
  'ÄPFEL, BIRNEN UND ÖL KOSTEN 3,50 €.',
  'äpfel und öl, zeit und uhr (zeit) „uhr“ ¿zeit? ¡uhr! -zeit —uhr\tzeit\nuhr',
  'abc123zeit zeit-uhr DIR-ZEIT',
  'ÉCOLE ÇA ÀÉÎÕÜ ǅ ǄEMAL',
  'ΑΘΗΝΑ ΕΙΝΑΙ ΩΡΑΙΑ. ΜΟΣΚΒΑ — МОСКВА ЗИМОЙ.',
  'zeit\u00A0uhr\u202Fzeit',
  '\uFFFD ZEIT \uFFFD UHR',
];

const ONE = ['Zeit', 'Uhr', 'ich', 'Ich', 'habe', 'Habe', 'keine', 'Keine', 'dir', 'Dir', 'Äpfel', 'Öl', 'Zeit-Uhr'];
const pieces = (w) => (ONE.includes(w) ? 1 : 2);

// Code point boundaries of a string (UTF-16 indices not inside a surrogate pair), 0 and length included.
function boundaries(s) {
  const out = [0];
  let i = 0;
  for (const c of s) out.push((i += c.length));
  return out;
}

const cases = STRINGS.map((input) => {
  const p = prepareSource(input);
  const at = boundaries(p.text);
  return {
    input,
    text: p.text,
    start: at.map((i) => p.start(i)),
    end: at.map((i) => p.end(i)),
    sentences: splitSentences(input).map((s) => [s.start, s.end]),
    recased: restoreCase(input, pieces),
  };
});
// One case per line.
const json = `{\n "generated_by": "node scripts/gen_text_cases.mjs",\n "one_piece_words": ${JSON.stringify(ONE)},\n` +
  ` "cases": [\n${cases.map((c) => `  ${JSON.stringify(c)}`).join(',\n')}\n ]\n}\n`;
if (process.argv.includes('--check')) {
  const same = readFileSync(OUT, 'utf8') === json;
  console.log(same ? 'up to date' : `${OUT} differs: regenerate it`);
  process.exit(same ? 0 : 1);
}
writeFileSync(OUT, json);
console.log(`${OUT}: ${cases.length} cases`);
