// Helpers that turn a pipeline result's `attentions` ({ name, layer, head, dims, data }[]) into what the drawings
// need, whatever way a task splits its maps (one [H, q, k] map per layer, or one [q, k] map per head).

/** First element when a task returns [result] (transformers.js style), else the result itself. */
export function first(out) {
  return Array.isArray(out) ? out[0] ?? {} : out ?? {};
}

/** name → layer → [{ rows, cols, data }] (one per head), sorted by layer. */
export function groupMaps(attentions = []) {
  const groups = new Map();
  for (const m of attentions) {
    if (!m || !Array.isArray(m.dims) || !m.data) continue;
    const data = m.data instanceof Float32Array ? m.data : Float32Array.from(m.data);
    const name = m.name ?? 'attention';
    const layer = Number.isInteger(m.layer) ? m.layer : 0;
    if (!groups.has(name)) groups.set(name, new Map());
    const layers = groups.get(name);
    if (!layers.has(layer)) layers.set(layer, []);
    const heads = layers.get(layer);
    const d = m.dims;
    if (d.length === 3) {
      const [h, q, k] = d;
      for (let i = 0; i < h; i++) heads.push({ rows: q, cols: k, data: data.subarray(i * q * k, (i + 1) * q * k) });
    } else if (d.length === 2) {
      const slot = Number.isInteger(m.head) && m.head >= 0 ? m.head : heads.length;
      heads[slot] = { rows: d[0], cols: d[1], data };
    } else if (d.length === 1) {
      heads.push({ rows: 1, cols: d[0], data });
    }
  }
  for (const [name, layers] of groups) {
    groups.set(name, new Map([...layers.entries()].sort((a, b) => a[0] - b[0]).map(([l, hs]) => [l, hs.filter(Boolean)])));
  }
  return groups;
}

/** Mean over heads of same-shape maps. */
export function meanHeads(heads) {
  const { rows, cols } = heads[0];
  const out = new Float32Array(rows * cols);
  for (const h of heads) for (let i = 0; i < out.length; i++) out[i] += h.data[i] / heads.length;
  return { rows, cols, data: out };
}

/** A BPE piece for display: "▁Hund" → "Hund", a continuation "olle" → "-olle". */
export function showPiece(p) {
  if (typeof p !== 'string') return String(p);
  if (p.startsWith('▁')) return p.slice(1) || '▁';
  if (/^<.*>$/.test(p) || /^[\p{P}]+$/u.test(p)) return p;
  return `-${p}`;
}

/** n labels: the candidate list whose length is n, else the first list cut or padded with positions. */
export function labelsFor(n, ...candidates) {
  const lists = candidates.filter((c) => Array.isArray(c));
  const exact = lists.find((c) => c.length === n);
  if (exact) return exact;
  // Pieces plus an end-of-sentence marker the list lacks, or a start symbol the map has.
  const base = lists[0] ?? [];
  return Array.from({ length: n }, (_, i) => base[i] ?? (i === base.length ? '</s>' : `#${i}`));
}

/** The map group that aligns target to source (cross-attention), if any. */
export function crossName(groups) {
  const names = [...groups.keys()];
  return names.find((n) => /cross|align|enc.?dec|source|context/i.test(n)) ??
    names.find((n) => !/self/i.test(n)) ?? names[0];
}
