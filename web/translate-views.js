// The translation demo's views of a result (pure functions of a TranslationResult, wasm/index.d.ts): the token and
// word labels, the model view's blocks, the alignment heatmap at word or piece level, the link drawing, and the
// notes that say where the links come from. translate.js and translate-panels.js render what these return.
import { groupMaps, meanHeads, showPiece, labelsFor, crossName } from './maps.js';


// Everyday German (the "examples" of models/de-en-general/golden.json), then Multi30k validation sentences (the
// golden cases of models/de-en-transformer/golden.json).
export const EXAMPLES = [
  'Kannst du mir bitte helfen?',
  'Wie geht es dir?',
  'Ich habe morgen keine Zeit.',
  'Der Zug hat zehn Minuten Verspätung.',
  'Ein Mann fährt mit dem Fahrrad über eine Brücke.',
  'Das Wetter ist heute schön.',
  'Zwei Kinder mit gelben Jacken spielen im Schlamm.',
  'Ein Mann in Blau fährt mit einem Fahrrad auf einer Piste.',
  'Ein Mann mit einem blauen Rucksack liest die Zeitung, während er auf die U-Bahn wartet.',
  'Eine Gruppe von Männern lädt Baumwolle auf einen Lastwagen',
  'Ein Polizist in Uniform trägt einen Ohrhörer.',
  'Ein schwarz gekleideter Junge schlägt ein Rad am Strand.',
  'Ein Kind sitzt in einer Menschenmenge auf den Schultern seines Vaters.',
  'Zwei Männer gehen einen unbefestigten Weg entlang.',
  'Ein Mann rennt mithilfe von Schneeschuhen durch den Schnee.',
];

// Under-translation that the coverage penalty repairs (de-en-transformer, beam 4): β = 0 gives "Two men
// acrobaticely as they watch." — "Statuen" is barely attended — and β = 1 "Two men acrobaticely as they watch their
// statues." (attnlens-cli translate --model models/de-en-transformer --beams 4 --coverage-beta 0 / 1).
export const COVERAGE_EXAMPLE = 'Zwei Männer tun so als seien sie Statuen, während Frauen ihnen zusehen.';

export const MODELS = [
  ['de-en-general', 'General Transformer'],
  ['de-en-transformer', 'Transformer'],
  ['de-en-rnn-additive', 'GRU + additive'],
  ['de-en-rnn-general', 'LSTM + general'],
];
export const missingText = (model) => `The model ${model} is not available in this build (no bundle under /models/${model}/).`;

/** Token labels of a translation result: its source and target pieces, as shown. */
export function tokenLabels(out) {
  return { src: out.source_tokens.map(showPiece), tgt: out.target_tokens.map(showPiece) };
}

export const wordTexts = (words) => (Array.isArray(words) ? words.map((w) => w.text) : []);

/** 'layer-mean 1, gdfa' / 'head 1.0, argmax' / 'cross, gdfa' → { layer, head, extraction } (0-based). */
export function parseMethod(method = '') {
  const ml = /layer-mean (\d+)/.exec(method);
  const mh = /head (\d+)\.(\d+)/.exec(method);
  const extraction = /,\s*(\w+)\s*$/.exec(method)?.[1] ?? '';
  if (mh) return { layer: Number(mh[1]), head: Number(mh[2]), extraction };
  return { layer: ml ? Number(ml[1]) : undefined, head: undefined, extraction };
}

/**
 * The model view's blocks for a result: one per attention kind (encoder self, decoder self, cross; the RNN's one cross
 * map), rows = layers, columns = heads, at word or piece level like the head view. Labels as the head view's; `keys`
 * (the raw tokens: '▁' marks and '</s>' kept) feed the head statistics.
 */
export function modelBlocks(out, words) {
  const groups = groupMaps(words ? out.word_attentions : out.attentions);
  const lists = words
    ? { src: wordTexts(out.source_words), tgt: wordTexts(out.target_words) }
    : { src: out.source_tokens, tgt: out.target_tokens };
  const show = words ? (l) => l : (l) => l.map(showPiece);
  const blocks = [];
  for (const [name, layers] of groups) {
    const encSelf = /enc.*self/i.test(name);
    const decSelf = /dec.*self/i.test(name);
    const self = /self/i.test(name);
    blocks.push({
      name,
      title: name.replace(/_/g, ' '),
      headName: 'head',
      self,
      layers: [...layers.entries()].map(([layer, heads]) => ({
        layer: Math.max(0, layer),
        maps: heads.map((h) => {
          const rowKeys = encSelf ? labelsFor(h.rows, lists.src, lists.tgt) : labelsFor(h.rows, lists.tgt, lists.src);
          const colKeys = decSelf ? labelsFor(h.cols, lists.tgt, lists.src) : labelsFor(h.cols, lists.src, lists.tgt);
          return { rows: h.rows, cols: h.cols, data: h.data, rowLabels: show(rowKeys), colLabels: show(colKeys), keys: colKeys };
        }),
      })),
    });
  }
  return blocks;
}

/** Where the links come from, in words: 'layer 2 of 3, mean of its heads' (the Transformer) or 'the cross attention'. */
export function describeSource(out, layers) {
  const { layer, head } = parseMethod(out.alignment_method);
  if (layer === undefined) return 'the cross attention';
  const of = layers > 1 ? ` of ${layers}` : '';
  return head === undefined ? `layer ${layer + 1}${of}, mean of its heads` : `layer ${layer + 1}${of}, head ${head + 1}`;
}

/** How the links were extracted from the word map. */
function describeExtraction(out) {
  const { extraction } = parseMethod(out.alignment_method);
  return extraction === 'argmax' ? 'argmax: one link per English word'
    : extraction === 'gdfa' ? 'grow-diag-final-and of both directions' : extraction;
}

/** Number of decoder layers of a result's cross attention (0 when unknown). */
export function crossLayers(out) {
  const groups = groupMaps(out.attentions);
  return groups.size ? groups.get(crossName(groups)).size : 0;
}

/** '(12 links from layer 2 of 3, mean of its heads; grow-diag-final-and of both directions)' */
export function linksNote(out) {
  const n = out.alignment?.length ?? 0;
  if (!n) return '(no links: this result has no attention maps)';
  return `(${n} link${n > 1 ? 's' : ''} from ${describeSource(out, crossLayers(out))}; ${describeExtraction(out)})`;
}

/**
 * The piece-level alignment heatmap: the cross attention the links were taken from (the layer, or head, named by
 * alignment_method; else the last layer, averaged over heads), with the pieces of linked words marked.
 */
export function pieceAlignment(out) {
  const groups = groupMaps(out.attentions);
  if (!groups.size) return null;
  const name = crossName(groups);
  const layers = groups.get(name);
  const want = parseMethod(out.alignment_method);
  const layer = want.layer !== undefined && layers.has(want.layer) ? want.layer : [...layers.keys()].pop();
  let heads = layers.get(layer);
  if (!heads.length) return null;
  const all = heads.length;
  if (want.head !== undefined && heads[want.head]) heads = [heads[want.head]];
  const m = heads.length > 1 ? meanHeads(heads) : heads[0];
  const { src, tgt } = tokenLabels(out);
  const note = layers.size > 1 || all > 1
    ? `(${name}, layer ${layer + 1} of ${layers.size}, ${heads.length > 1 ? `mean of ${heads.length} heads` : `head ${want.head + 1} of ${all}`})`
    : `(${name})`;
  const marks = [];
  const sw = out.source_words ?? [];
  const tw = out.target_words ?? [];
  for (const [s, t] of out.alignment ?? []) {
    const [s0, s1] = sw[s]?.pieces ?? [0, 0];
    const [t0, t1] = tw[t]?.pieces ?? [0, 0];
    for (let r = t0; r < t1; r++) for (let c = s0; c < s1; c++) marks.push([r, c]);
  }
  return {
    note,
    model: {
      rowLabels: labelsFor(m.rows, tgt), colLabels: labelsFor(m.cols, src), data: m.data, marks,
      rowName: 'target', colName: 'source',
    },
  };
}

/** The word-level heatmap: alignment_map [target words × source words], the links marked. */
export function wordAlignment(out) {
  const src = wordTexts(out.source_words);
  const tgt = wordTexts(out.target_words);
  const am = out.alignment_map;
  if (!am?.data || !src.length || !tgt.length || am.data.length !== src.length * tgt.length) return null;
  return {
    note: `(words: ${describeSource(out, crossLayers(out))})`,
    model: {
      rowLabels: tgt, colLabels: src, data: am.data, marks: (out.alignment ?? []).map(([s, t]) => [t, s]),
      rowName: 'target', colName: 'source',
    },
  };
}

/** Per target word: the sum of its pieces' log-probabilities (align() results only). */
export function wordLogprobs(out) {
  const lp = out.token_logprobs;
  if (!lp?.length || !out.target_words?.length) return null;
  return out.target_words.map((w) => {
    let sum = 0;
    for (let i = w.pieces[0]; i < w.pieces[1] && i < lp.length; i++) sum += lp[i];
    return sum;
  });
}

/** What the link view draws for a result. */
export function linkModel(out) {
  const source = wordTexts(out.source_words);
  const target = wordTexts(out.target_words);
  if (!source.length || !target.length) return null;
  const am = out.alignment_map;
  const ns = source.length;
  const ok = am?.data?.length === ns * target.length;
  const lps = wordLogprobs(out);
  return {
    source, target, links: (out.alignment ?? []).filter(([s, t]) => s < ns && t < target.length),
    sourceName: 'German', targetName: 'English',
    weights: ok ? (s, t) => am.data[t * ns + s] : undefined,
    targetProb: lps ? lps.map((l) => Math.exp(l)) : undefined,
    targetNote: lps ? (t) => `log p ${lps[t].toFixed(2)}, p ${Math.exp(lps[t]).toFixed(2)}` : undefined,
  };
}

export const KEY_TEXT = {
  word: 'Darker cells: more attention from this English word (row) to that German word (column); orange dots: the links.',
  piece: 'Darker cells: more attention from this English piece (row) to that German piece (column); orange dots: pieces of linked words.',
};

/** Draws a result's links and heatmap into the views `v` ({ links, heatmap }) at `level`; returns the heatmap's note. */
export function drawAlignment(v, out, level) {
  const lm = linkModel(out);
  if (lm) v.links.set(lm); else v.links.clear();
  const a = (level === 'word' && wordAlignment(out)) || pieceAlignment(out);
  if (a) v.heatmap.set(a.model); else v.heatmap.clear();
  return a ? a.note : '(this result has no attention maps)';
}
