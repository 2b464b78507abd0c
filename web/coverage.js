// Coverage (Tu et al. 2016): how much attention each source word has received so far, c_t(j) = Σ_{t' ≤ t} α_t'(j),
// drawn as one bar per source word after target word t (a slider walks t through the translation). The attention α
// is the signal the engine's beam search uses for its GNMT coverage penalty β Σ_j log min(c(j), 1): the last
// layer's cross-attention averaged over heads (an RNN's one cross map). A word whose final coverage stays under
// UNDER was barely looked at (a sign of under-translation); one over OVER was looked at again and again (a sign of
// over-translation, a repeated word).
import { fitCanvas, rampColor, LINK_COLOR } from './draw.js';
import { groupMaps, meanHeads, crossName } from './maps.js';

export const UNDER = 0.5;
export const OVER = 1.5;

/**
 * The attention signal of a translation result at word level (word_attentions) or piece level (attentions):
 * { rows: T, cols: S, data: Float32Array [T × S] } — last cross layer, mean over heads — or null without maps.
 */
export function coverageSignal(out, words) {
  const groups = groupMaps(words && out.word_attentions?.length ? out.word_attentions : out.attentions);
  if (!groups.size) return null;
  const layers = groups.get(crossName(groups));
  const heads = layers.get([...layers.keys()].pop());
  if (!heads?.length) return null;
  return heads.length > 1 ? meanHeads(heads) : heads[0];
}

/** c_t for every t: Float32Array [T × S], row t = Σ_{t' ≤ t} α_t'. */
export function cumulative({ rows, cols, data }) {
  const c = new Float32Array(rows * cols);
  for (let t = 0; t < rows; t++) {
    for (let j = 0; j < cols; j++) c[t * cols + j] = data[t * cols + j] + (t > 0 ? c[(t - 1) * cols + j] : 0);
  }
  return c;
}

/** A bar chart of the coverage of each source token after one target step, with the 1.0 line. */
export class CoverageView {
  constructor(canvas, { onRead = () => {} } = {}) {
    this.canvas = canvas;
    this.onRead = onRead;
    this.model = null;
  }

  /** model: { signal (coverageSignal), src: labels [S], tgt: labels [T] }; step: the target row shown (default last). */
  set(model, step) {
    this.model = model ? { ...model, cum: cumulative(model.signal) } : null;
    this.show(step);
  }

  /** Shows the coverage after another target step of the same model (default: the last). */
  show(step) {
    this.step = this.model ? Math.min(step ?? this.model.signal.rows - 1, this.model.signal.rows - 1) : 0;
    this.draw();
  }

  clear() {
    this.set(null);
  }

  /** The coverage vector after `step` (Float32Array [S]). */
  vector(step = this.step) {
    const { cols } = this.model.signal;
    return this.model.cum.subarray(step * cols, (step + 1) * cols);
  }

  draw() {
    const c = this.canvas;
    if (!this.model) {
      fitCanvas(c, 10, 10);
      c.dataset.coverage = '';
      return;
    }
    const { src, tgt } = this.model;
    const v = this.vector();
    const n = v.length;
    const barW = Math.max(26, Math.min(64, Math.floor(((c.parentElement?.clientWidth || 480) - 40) / Math.max(1, n))));
    const top = 10;
    const h = 120;
    const labelH = 62;
    const width = 34 + n * barW;
    const ctx = fitCanvas(c, width, top + h + labelH);
    const max = Math.max(2, ...v);
    const y = (val) => top + h - (val / max) * h;
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, width, top + h + labelH);
    ctx.font = '11px system-ui, sans-serif';
    ctx.fillStyle = '#495057';
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    for (const g of [0, 1, 2]) if (g <= max) ctx.fillText(String(g), 26, y(g));
    const last = this.step === this.model.signal.rows - 1;
    for (let j = 0; j < n; j++) {
      const x = 34 + j * barW;
      const under = last && v[j] < UNDER;
      const over = v[j] > OVER;
      ctx.fillStyle = over ? '#c92a2a' : under ? LINK_COLOR : rampColor(Math.min(1, v[j]));
      ctx.fillRect(x + 3, y(v[j]), barW - 6, top + h - y(v[j]));
      ctx.strokeStyle = '#adb5bd';
      ctx.strokeRect(x + 3.5, y(v[j]) + 0.5, barW - 7, Math.max(0, top + h - y(v[j]) - 1));
      ctx.save();
      ctx.translate(x + barW / 2, top + h + 6);
      ctx.rotate(-Math.PI / 4);
      ctx.textAlign = 'right';
      ctx.fillStyle = '#1d2329';
      ctx.fillText(String(src[j] ?? j).slice(0, 12), 0, 0);
      ctx.restore();
    }
    // The line c = 1: the word has been attended to once in all.
    ctx.strokeStyle = '#1d2329';
    ctx.setLineDash([4, 3]);
    ctx.beginPath();
    ctx.moveTo(30, y(1));
    ctx.lineTo(width, y(1));
    ctx.stroke();
    ctx.setLineDash([]);
    c.dataset.coverage = JSON.stringify(Array.from(v, (x) => Math.round(x * 1e6) / 1e6));
    c.dataset.step = String(this.step);
    c.setAttribute('aria-label', `Coverage after target ${this.step + 1} of ${tgt.length} ('${tgt[this.step] ?? ''}'): ` +
      Array.from(v, (x, j) => `${src[j] ?? j} ${x.toFixed(2)}`).join(', '));
    const lows = last ? Array.from(v, (x, j) => [x, j]).filter(([x]) => x < UNDER).map(([, j]) => src[j]) : [];
    const highs = Array.from(v, (x, j) => [x, j]).filter(([x]) => x > OVER).map(([, j]) => src[j]);
    this.onRead([
      `after ‘${tgt[this.step] ?? ''}’ (${this.step + 1} of ${tgt.length})`,
      lows.length ? `barely attended (< ${UNDER}): ${lows.join(', ')}` : '',
      highs.length ? `attended more than ${OVER}×: ${highs.join(', ')}` : '',
    ].filter(Boolean).join(' · '));
  }
}
