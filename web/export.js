// Export: PNG of any canvas (canvas.toBlob), SVG text, a result's maps as JSON, one map as a NumPy .npy file.
// npyBytes() and mapsDocument() are pure (tests/node/export.test.mjs runs them in Node); the rest needs a DOM.
//
// The .npy choice: one file per map, the map selected in the model view (shape [rows, cols], little-endian float32);
// the JSON holds every map of the result with its tokens, so `np.array(doc['maps'][k]['data']).reshape(dims)` gives
// any other one.

/**
 * A NumPy .npy file (format version 1.0) of float32 values, little-endian ('<f4'), C order:
 * magic '\x93NUMPY', version 1.0, a uint16 LE header length, the header (a Python dict literal, padded with spaces
 * and ended by '\n' so that the data starts at a multiple of 64 bytes), then the data.
 */
export function npyBytes(data, shape) {
  if (!Array.isArray(shape) || shape.some((d) => !Number.isInteger(d) || d < 0)) {
    throw new RangeError(`npyBytes: shape must be non-negative integers, got ${JSON.stringify(shape)}`);
  }
  const count = shape.reduce((a, b) => a * b, 1);
  if (data.length !== count) throw new RangeError(`npyBytes: shape ${JSON.stringify(shape)} needs ${count} values, got ${data.length}`);
  const shapeText = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
  const dict = `{'descr': '<f4', 'fortran_order': False, 'shape': ${shapeText}, }`;
  const pre = 10; // magic (6) + version (2) + header length (2)
  const total = Math.ceil((pre + dict.length + 1) / 64) * 64;
  const header = `${dict}${' '.repeat(total - pre - dict.length - 1)}\n`;
  if (header.length > 0xffff) throw new RangeError('npyBytes: shape too long for a version 1.0 header');
  const out = new Uint8Array(total + count * 4);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]); // \x93 N U M P Y, version 1.0
  const view = new DataView(out.buffer);
  view.setUint16(8, header.length, true);
  for (let i = 0; i < header.length; i++) out[pre + i] = header.charCodeAt(i);
  for (let i = 0; i < count; i++) view.setFloat32(total + i * 4, data[i], true);
  return out;
}

/**
 * The JSON document of a result's maps:
 * { format: 'attnlens-maps', version: 1, task, model, input, level, tokens: { <name>: [token] },
 *   maps: [{ name, layer, head, dims: [rows, cols], rows: [label], cols: [label], data: [number], token? }] }
 * layer and head are 0-based; data is row-major (row = query, column = key). The captioner's maps are its words'
 * image grids (name 'visual', head = the word's index, rows/cols null, token = the word, data row-major over the grid).
 */
export function mapsDocument({ task, model, input, level = null, tokens = {}, maps = [] }) {
  return {
    format: 'attnlens-maps',
    version: 1,
    task,
    model,
    input,
    level,
    tokens,
    maps: maps.map((m) => ({
      name: m.name,
      layer: m.layer,
      head: m.head,
      dims: [m.rows, m.cols],
      rows: m.rowLabels ?? null,
      cols: m.colLabels ?? null,
      data: Array.from(m.data),
      ...(m.label !== undefined && m.label !== null ? { token: String(m.label) } : {}),
    })),
  };
}

/** A file name made of safe characters: 'de-en-general cross L2 H3' → 'de-en-general-cross-L2-H3'. */
export function fileName(...parts) {
  return parts.filter((p) => p !== undefined && p !== null && p !== '').join('-').replace(/[^\w.-]+/g, '-').replace(/-+/g, '-');
}

/** Text for XML (SVG) content and attribute values. */
export function escapeXml(s) {
  return String(s).replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]);
}

// ---- DOM side -------------------------------------------------------------------------------------------------

/** Saves `blob` as a download named `name` (an <a download> on an object URL). */
export function download(blob, name) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.hidden = true;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 30_000);
}

/** The canvas as a PNG Blob. */
export function canvasBlob(canvas) {
  return new Promise((resolve, reject) => {
    canvas.toBlob((b) => (b ? resolve(b) : reject(new Error('the drawing is empty'))), 'image/png');
  });
}

export async function downloadPng(canvas, name) {
  download(await canvasBlob(canvas), name.endsWith('.png') ? name : `${name}.png`);
}

export function downloadText(text, name, type) {
  download(new Blob([text], { type }), name);
}

/** Copies the page's URL (its state) to the clipboard; the button says whether it worked. */
export async function copyLink(button) {
  const label = button.dataset.label ?? button.textContent;
  button.dataset.label = label;
  try {
    await navigator.clipboard.writeText(location.href);
    button.textContent = 'Link copied';
  } catch {
    button.textContent = 'Copy the address bar: it holds this view';
  }
  setTimeout(() => { button.textContent = label; }, 2500);
}

/** Shaded words (the sentiment view) drawn into a new canvas: one box per token, its shade the weight ÷ max. */
export function wordsCanvas(tokens, weights, color, { width = 640 } = {}) {
  const c = document.createElement('canvas');
  const probe = c.getContext('2d');
  const font = '16px system-ui, sans-serif';
  probe.font = font;
  const pad = 8;
  const h = 26;
  const gap = 6;
  const boxes = [];
  let x = pad;
  let y = pad;
  for (const t of tokens) {
    const w = Math.ceil(probe.measureText(t).width) + 12;
    if (x + w > width - pad && x > pad) { x = pad; y += h + gap; }
    boxes.push({ x, y, w });
    x += w + gap;
  }
  c.width = width;
  c.height = y + h + pad;
  const ctx = c.getContext('2d');
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, c.width, c.height);
  let max = 0;
  for (const v of weights) max = Math.max(max, v);
  ctx.font = font;
  ctx.textBaseline = 'middle';
  tokens.forEach((t, i) => {
    const s = max > 0 ? weights[i] / max : 0;
    const b = boxes[i];
    ctx.fillStyle = color(s);
    ctx.fillRect(b.x, b.y, b.w, h);
    ctx.fillStyle = s > 0.6 ? '#fff' : '#1d2329';
    ctx.fillText(t, b.x + 6, b.y + h / 2);
  });
  return c;
}

/**
 * Wires every `button[data-png]` of `root`: a click saves the canvas whose id is data-png (or, when data-png names
 * a function registered with registerPng(), the canvas it returns) as `<data-file>.png`.
 */
const pngSources = new Map();
export function registerPng(id, make) { pngSources.set(id, make); }
export function wireExportButtons(root = document) {
  for (const b of root.querySelectorAll('button[data-png]')) {
    b.addEventListener('click', async () => {
      const id = b.dataset.png;
      const make = pngSources.get(id);
      const canvas = make ? make() : document.getElementById(id);
      if (!canvas || !canvas.width || !canvas.height) return;
      try {
        await downloadPng(canvas, b.dataset.file || id);
      } catch (err) {
        console.warn('attnlens: PNG export:', err.message);
      }
    });
  }
}

/**
 * The model view's two exports: `json` saves `doc()` (a mapsDocument) and `npy` the selected map (else the first,
 * which it then selects) as `<npyName(map)>.npy`.
 */
export function wireMapExports(modelView, { json, npy, doc, jsonName, npyName }) {
  json.addEventListener('click', () => {
    const d = doc();
    if (d) downloadText(JSON.stringify(d), `${jsonName(d)}.json`, 'application/json');
  });
  npy.addEventListener('click', () => {
    const m = modelView.selectedMap() ?? modelView.maps()[0];
    const name = m && npyName(m);
    if (!name) return;
    if (!modelView.selectedMap()) modelView.select(m);
    download(new Blob([npyBytes(m.data, [m.rows, m.cols])], { type: 'application/octet-stream' }), `${name}.npy`);
  });
}
