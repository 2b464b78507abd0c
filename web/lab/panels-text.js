// The lab's panels over typed text: co-attention (parallel and max-pooled; alternating), attention-over-attention,
// hierarchical attention, the pointer network, coverage and Tang's position-weighted memories. Words become toy
// vectors (words.js: the same word, the same vector), so equal words in two texts match.
//
// Toy weights, fixed here (d = 6: five hashed coordinates and a constant 1, see words.js):
//   co-attention (parallel)  W_b = diag(1, 1, 1, 1, 1, 0): the affinity is the words' similarity. k = 2: row 1 of
//                W_v and W_q reads the constant, so H_v row 1 is how well a word matches the whole other side;
//                row 2 reads coordinate 1; w_hv = w_hq = (4, 1)
//   co-attention (alternating)  k = 10. Step 1: W_x1 reads coordinates 1 and 2, w_hx1 = (1.5, −1.5, 0, …); steps 2, 3:
//                pairs of tanh units bump(x − g) = tanh(3(x − g) + 1.5) − tanh(3(x − g) − 1.5) per coordinate
//                (the constant coordinate supplies the ±1.5), w_hx = ±0.5: a word scores high when it is close
//                to the guide g (ŝ, then v̂)
//   hierarchical W_w = W_s = I, u_w = u_s = 3 × the vector of the typed context word (Yang's learned context, here
//                one you choose)
//   pointer      d_att = 1: W = 0.5, U = −1.2, v = 5 on numbers scaled by the largest |x|: the score falls as x
//                grows, and with the positions already pointed at masked out the pointer sorts ascending
//   coverage     W = U = I, v = (1, 1, 1, 1, 1, 0), w_c = −w × v; every decoder step has the same query, so
//                only the coverage moves the attention on
//   Tang         w_att = (0.5 × five coordinates, 2 on the constant; 0 on the aspect half); learned location
//                vectors l(L) = (1.5 − 0.5 L) on every coordinate
import { tensor } from '../../wasm/index.js';
import { makePanel, bars, heatmap, shadedWords, values, slider, textBox, el } from './ui.js';
import { words, vectors, wordVector, DIM } from './words.js';

const eye = (n, scale = 1) => Array.from({ length: n * n }, (_, i) => (i % (n + 1) === 0 ? scale : 0));
const e = (k, scale = 1) => Array.from({ length: DIM }, (_, i) => (i === k ? scale : 0));
const CONST = DIM - 1;
const mat = (list, d = DIM) => tensor(list, [list.length / d, d]);

const W_B = tensor(eye(DIM).map((v, i) => (i === DIM * DIM - 1 ? 0 : v)), [DIM, DIM]);
const CO_W = mat([...e(CONST, 0.5), ...e(0, 0.8)]);
const CO_WH = tensor([4, 1]);
// Step 1 has the same k = 10 units as the others (the op shares k); only its first two read anything.
const ALT_X1 = mat([...e(0, 1.2), ...e(1, 1.2), ...Array(8 * DIM).fill(0)]);
const ALT_H1 = tensor([1.5, -1.5, 0, 0, 0, 0, 0, 0, 0, 0]);
// Bump units, two per content coordinate: W_x rows 3 e_j ± 1.5 e_const, W_g rows −3 e_j.
const BUMP_X = mat(Array.from({ length: 2 * CONST }, (_, u) => e(u >> 1, 3).map((v, i) => (i === CONST ? (u % 2 ? -1.5 : 1.5) : v))).flat());
const BUMP_G = mat(Array.from({ length: 2 * CONST }, (_, u) => e(u >> 1, -3)).flat());
const BUMP_H = tensor(Array.from({ length: 2 * CONST }, (_, u) => (u % 2 ? -0.5 : 0.5)));
const I6 = tensor(eye(DIM), [DIM, DIM]);
const PTR = { w: tensor([0.5], [1, 1]), u: tensor([-1.2], [1, 1]), v: tensor([5]) };
const COV_Q = [0.3, -0.2, 0.1, 0.4, -0.3, 1];
const COV_V = [1, 1, 1, 1, 1, 0];
const TANG_W = tensor([0.5, 0.5, 0.5, 0.5, 0.5, 2, 0, 0, 0, 0, 0, 0]);
const TANG_MODELS = ['1: e ⊙ l(L, hop)', '2: e ⊙ (1 − L/T)', '3: e + l(L)', '4: e ⊙ σ(l(L))'];

const needWords = (list, n, what) => {
  if (list.length < n) throw new Error(`Type at least ${n} word${n > 1 ? 's' : ''} in ${what}.`);
};
/** The words of each named text box of state `s` (at most `max` each), each box needing at least one word. */
const textWords = (s, maxima) => Object.entries(maxima).map(([name, max]) => {
  const list = words(s[name], max);
  needWords(list, 1, `the ${name}`);
  return list;
});

const PANELS = [
  { op: 'co_attention_parallel', ops: ['co_attention_parallel', 'co_attention_max_pooled'], title: 'co-attention, parallel',
    paper: 'Lu 2016; max-pooled: dos Santos 2016',
    formula: 'C = tanh(Qᵀ W_b V);  H_v = tanh(W_v V + (W_q Q) C),  a_v = softmax(w_hvᵀ H_v)  (and a_q);  max-pooled: a_v = softmax(max_t C_t·)',
    texts: [['question', 'where is the milk'], ['context', 'mary went to the kitchen and took the milk to the garden']],
    draw(rec, parts, s) {
      const [q, v] = textWords(s, { question: 6, context: 12 });
      const inputs = { v: mat(vectors(v)), q: mat(vectors(q)), w_b: W_B };
      const par = rec.run('co_attention_parallel', { ...inputs, w_v: CO_W, w_q: CO_W, w_hv: CO_WH, w_hq: CO_WH }, {},
        { affinity: 'affinity', a_v: 'a_v', a_q: 'a_q' });
      const max = rec.run('co_attention_max_pooled', inputs, {}, { 'max a_v': 'a_v', 'max a_q': 'a_q' });
      parts.push(heatmap(par.affinity.data, q, v, { label: 'affinity', lo: -1, hi: 1, caption: 'affinity C (question × context, −1 white … 1 dark)' }),
        bars(q, [{ label: 'a_q', title: 'parallel', data: par.a_q.data }, { label: 'max a_q', title: 'max-pooled', data: max.a_q.data }], { caption: 'a_q over the question' }),
        bars(v, [{ label: 'a_v', title: 'parallel', data: par.a_v.data }, { label: 'max a_v', title: 'max-pooled', data: max.a_v.data }], { caption: 'a_v over the context' }));
    } },
  { op: 'co_attention_alternating', title: 'co-attention, alternating', paper: 'Lu 2016',
    formula: 'H = tanh(W_x X + (W_g g) 1ᵀ);  a_x = softmax(w_hxᵀ H);  x̂ = Σ a_x x  — step 1: X = Q, g = 0;  step 2: X = V, g = ŝ;  step 3: X = Q, g = v̂',
    texts: [['question', 'what colour is the small cat'], ['context', 'a small black cat sits next to a big white dog']],
    draw(rec, parts, s) {
      const [q, v] = textWords(s, { question: 6, context: 12 });
      const out = rec.run('co_attention_alternating', {
        v: mat(vectors(v)), q: mat(vectors(q)), w_x1: ALT_X1, w_hx1: ALT_H1,
        w_x2: BUMP_X, w_g2: BUMP_G, w_hx2: BUMP_H, w_x3: BUMP_X, w_g3: BUMP_G, w_hx3: BUMP_H,
      }, {}, { a_s: 'a_s', a_v: 'a_v', a_q: 'a_q' });
      parts.push(bars(q, [{ label: 'a_s', data: out.a_s.data }], { caption: 'step 1: the question on its own → ŝ' }),
        bars(v, [{ label: 'a_v', data: out.a_v.data }], { caption: 'step 2: the context guided by ŝ → v̂' }),
        bars(q, [{ label: 'a_q', data: out.a_q.data }], { caption: 'step 3: the question guided by v̂ → q̂' }));
    } },
  { op: 'attention_over_attention', title: 'attention-over-attention', paper: 'Cui 2017',
    formula: 'M = D Qᵀ;  α = column-softmax(M);  β = mean over rows of row-softmax(M);  s = α β',
    note: 's: the attention over the document words, the cloze answer is the word with the largest sum.',
    texts: [['document', 'mary took the milk to the garden and john went to the kitchen'], ['query', 'where did mary take the milk']],
    draw(rec, parts, s) {
      const [d, q] = textWords(s, { document: 12, query: 6 });
      const out = rec.run('attention_over_attention', { doc: mat(vectors(d)), query: mat(vectors(q)) }, {},
        { alpha: 'alpha', beta_avg: 'beta_avg', s: 's' });
      parts.push(heatmap(out.alpha.data, d, q, { label: 'alpha', hi: 1, caption: 'α: each query word\'s attention over the document (columns sum to 1)' }),
        bars(q, [{ label: 'beta_avg', data: out.beta_avg.data }], { caption: 'β: attention over the query' }),
        bars(d, [{ label: 's', data: out.s.data }], { caption: 's = α β over the document' }));
    } },
  { op: 'hierarchical_attention', title: 'hierarchical attention', paper: 'Yang 2016',
    formula: 'u_it = tanh(W_w h_it);  α_it = softmax_t(u_itᵀ u_w);  s_i = Σ_t α_it h_it;  then the same over sentences with u_s',
    note: 'Sentences end at . ! or ?. Words near the context word (equal words match) get the attention, and so do the sentences that hold them.',
    knobs: [
      { text: 'paragraph', label: 'paragraph', aria: 'hierarchical attention: paragraph', rows: 2,
        value: 'The food was cold. The service was slow! But the dessert was wonderful.' },
      { text: 'context', label: 'context word u', aria: 'hierarchical attention: context word', value: 'dessert', wide: false },
    ],
    draw(rec, parts, s) {
      const sentences = s.paragraph.split(/[.!?]+/).map((t) => words(t, 8)).filter((w) => w.length).slice(0, 4);
      const ctx = words(s.context, 1);
      if (!sentences.length) throw new Error('Type a paragraph.');
      needWords(ctx, 1, 'the context word box');
      const u = tensor(wordVector(ctx[0]).map((x) => 3 * x));
      const out = rec.run('hierarchical_attention', { words: mat(vectors(sentences.flat())), w_word: I6, u_word: u, w_sent: I6, u_sent: u },
        { sentence_lengths: sentences.map((w) => w.length) }, { word_alpha: 'word_alpha', sentence_alpha: 'sentence_alpha' });
      parts.push(bars(sentences.map((_, i) => `s${i + 1}`), [{ label: 'sentence_alpha', data: out.sentence_alpha.data }], { caption: 'sentence attention' }));
      let offset = 0;
      const list = el('div', 'lab-sentences');
      sentences.forEach((w, i) => {
        const row = shadedWords(w, out.word_alpha.data.subarray(offset, offset + w.length), { label: 'word_alpha', offset, hi: 1 });
        row.prepend(el('span', 'row-label', `s${i + 1}`));
        list.append(row);
        offset += w.length;
      });
      parts.push(el('p', 'cap', 'word attention within each sentence'), list);
    } },
  { op: 'pointer_attention', title: 'pointer network', paper: 'Vinyals 2015',
    formula: 'p(c_i) = softmax_j(vᵀ tanh(W h_i + U x_j))  over the input positions;  c_i = argmax, then masked',
    note: 'Each step points at one input position; positions already pointed at are masked, and the decoder reads the last pick. The toy weights make it sort ascending.',
    knobs: [{ text: 'numbers', label: 'numbers', aria: 'pointer network: numbers to point at', value: '42 7 19 3 25' }],
    draw(rec, parts, s) {
      const xs = (s.numbers.match(/-?\d+(\.\d+)?/g) ?? []).map(Number).slice(0, 10);
      if (xs.length < 2) throw new Error('Type at least two numbers.');
      const scale = Math.max(...xs.map(Math.abs)) || 1;
      const encoder = tensor(xs.map((x) => x / scale), [xs.length, 1]);
      const keep = xs.map(() => 1);
      const picks = [];
      let last = 0;
      for (let t = 0; t < xs.length; t++) {
        const out = rec.run('pointer_attention', { decoder: tensor([last], [1, 1]), encoder, ...PTR, key_keep: tensor(keep) }, {},
          { probs: 'probs', pointers: 'pointers' });
        const j = out.pointers.data[0];
        picks.push(j);
        keep[j] = 0;
        last = xs[j] / scale;
      }
      const labels = xs.map(String);
      parts.push(heatmap(rec.weights.probs, picks.map((_, t) => `step ${t + 1}`), labels, { label: 'probs', hi: 1, caption: 'p(c_i): one row per decoder step' }));
      const out = el('p', 'lab-pointed');
      out.append('pointed at: ');
      picks.forEach((j, t) => {
        const span = el('span', 'v', String(j + 1));
        span.title = `step ${t + 1}: position ${j + 1} (${xs[j]})`;
        out.append(span, t < picks.length - 1 ? ', ' : '');
      });
      out.append(` (positions, from 1) → ${picks.map((j) => xs[j]).join(' ')}`);
      parts.push(out);
    } },
  { op: 'coverage_attention', ops: ['coverage_attention', 'coverage_penalty'], title: 'coverage', paper: 'Tu 2016; penalty: Wu 2016',
    formula: 's_tj = vᵀ tanh(W q_t + U k_j + w_c c_tj),  c_t = Σ_{t′<t} α_t′;  penalty cp = β Σ_j log min(Σ_t α_tj, 1), β = 1',
    note: 'Every decoder step asks the same query: without coverage (w = 0) it attends to the same word each time; with it, covered words step back.',
    knobs: [
      { text: 'source', label: 'source', aria: 'coverage: source sentence', value: 'ein mann fährt mit dem fahrrad' },
      { slider: 'step', label: 'decoder step t', aria: 'coverage: decoder step', min: 1, max: 6, value: 3, handle: 'stepSlider' },
      { slider: 'w', label: 'coverage weight w', aria: 'coverage: weight of the coverage in the score', min: 0, max: 4, step: 0.5, value: 2 },
    ],
    draw(rec, parts, s) {
      const src = words(s.source, 10);
      needWords(src, 1, 'the source');
      const t = Math.min(s.step, s.stepSlider.setMax(Math.max(1, src.length)));
      const queries = tensor(Array.from({ length: t }, () => COV_Q).flat(), [t, DIM]);
      const out = rec.run('coverage_attention', { queries, keys: mat(vectors(src)), w: I6, u: I6, v: tensor(COV_V), w_c: tensor(COV_V.map((x) => -s.w * x)) }, {},
        { weights: 'weights', coverage: 'coverage' });
      const pen = rec.run('coverage_penalty', { weights: out.weights }, { beta: 1 }, { penalty: 'penalty' });
      parts.push(heatmap(out.weights.data, Array.from({ length: t }, (_, i) => `t = ${i + 1}`), src, { label: 'weights', hi: 1, caption: 'α_t over the source, one row per step' }),
        bars(src, [{ label: 'coverage', data: out.coverage.data }], { caption: `coverage Σ α after ${t} step${t > 1 ? 's' : ''} (a full bar: 1, covered)` }),
        values([{ name: 'coverage penalty', label: 'penalty', data: pen.penalty.data }]));
    } },
  { op: 'position_weighted_memory', title: 'position-weighted memory', paper: 'Tang 2016',
    formula: 'm_i = e_i ⊙ l_i (Models 1, 2),  e_i + l_i (3),  e_i ⊙ σ(l_i) (4);  α = softmax(tanh(w_attᵀ[m_i; v_a]))',
    note: 'L_i: a word\'s distance to the aspect word (which is left out of the memory). Model 1: l_i = (1 − L_i/T) − (hop/d)(1 − 2L_i/T); Model 2: l_i = 1 − L_i/T; Models 3 and 4: learned vectors l(L).',
    knobs: [
      { text: 'sentence', label: 'sentence', aria: 'position-weighted memory: sentence', value: 'the food was great but the service was slow' },
      { slider: 'aspect', label: 'aspect word', aria: 'position-weighted memory: position of the aspect word', min: 1, max: 9, value: 7,
        handle: 'aspectSlider', map: (v) => v - 1 },
      { slider: 'hop', label: 'hop', aria: 'position-weighted memory: hop (Model 1)', min: 1, max: 3, value: 1 },
    ],
    draw(rec, parts, s) {
      const w = words(s.sentence, 12);
      needWords(w, 2, 'the sentence');
      const a = Math.min(s.aspect, s.aspectSlider.setMax(w.length) - 1);
      const context = w.filter((_, i) => i !== a);
      const distance = w.map((_, i) => Math.abs(i - a)).filter((_, i) => i !== a);
      const inputs = {
        embeddings: mat(vectors(context)), aspect: tensor(wordVector(w[a])), w_att: TANG_W,
        locations: tensor(distance), location_vectors: mat(distance.flatMap((L) => Array(DIM).fill(1.5 - 0.5 * L))),
      };
      for (let model = 1; model <= 4; model++) rec.run('position_weighted_memory', inputs, { model, hop: s.hop }, { alpha: 'alpha' });
      parts.push(el('p', 'cap', `aspect: “${w[a]}”`),
        heatmap(rec.weights.alpha, TANG_MODELS, context, { label: 'alpha', caption: 'α over the context words, one row per location model (colours up to the largest α)' }));
    } },
];

export function setupTextPanels(parent) {
  parent.replaceChildren();
  for (const p of PANELS) {
    const panel = makePanel(parent, p);
    const state = {};
    const update = () => panel.render((rec, parts) => p.draw(rec, parts, state), inputOf(state));
    const knobs = p.knobs ?? (p.texts ?? []).map(([name, value]) => ({ text: name, label: name, aria: `${p.title}: ${name}`, value }));
    for (const k of knobs) addKnob(panel.knobs, k, state, update);
    update();
  }
}

/**
 * One knob of a panel: `{ text: key, … }` a text box, `{ slider: key, …, handle, map }` a slider (its object kept in
 * state[handle] when the drawing sets its range; state[key] = map(value)). The rest are textBox()/slider() options.
 */
function addKnob(parent, { text, slider: key, handle, map = (v) => v, ...options }, state, update) {
  if (text) {
    state[text] = options.value;
    textBox(parent, { ...options, onInput: (v) => { state[text] = v; update(); } });
    return;
  }
  state[key] = map(options.value);
  const s = slider(parent, { ...options, onInput: (v) => { state[key] = map(v); update(); } });
  if (handle) state[handle] = s;
}

/** What the person set, without the slider objects. */
function inputOf(state) {
  return Object.fromEntries(Object.entries(state).filter(([, v]) => typeof v !== 'object'));
}
