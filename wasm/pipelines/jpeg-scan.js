// The entropy-coded part of a JPEG (wasm/pipelines/jpeg.js): Huffman tables, the bit reader, and the scans of
// baseline/extended (sequential) and progressive Huffman JPEG, written from ITU T.81 (Annexes C, F and G) and
// following libjpeg's handling of corrupt data: a marker met inside a scan reads as zero bits, a block's run past
// coefficient 63 stops that block. Coefficients are stored per component in natural (row-major) order, not yet
// dequantised. Every read is bounds-checked; errors are plain Errors starting "JPEG:".

const fail = (why) => new Error(`JPEG: ${why}`);

/** Zig-zag position k → natural position. */
export const ZIGZAG = Int32Array.from([
  0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21,
  28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61,
  54, 47, 55, 62, 63,
]);

/**
 * A decoding table from a DHT table's 16 code counts and its values: { maxcode, valptr, mincode, values, lookup }
 * (lookup: the first 9 bits → (length << 8) | value, 0 when the code is longer).
 */
export function huffmanTable(counts, values) {
  const maxcode = new Int32Array(18).fill(-1);
  const valptr = new Int32Array(17);
  const mincode = new Int32Array(17);
  const lookup = new Uint16Array(512);
  let code = 0;
  let k = 0;
  for (let len = 1; len <= 16; len++) {
    valptr[len] = k;
    mincode[len] = code;
    for (let i = 0; i < counts[len - 1]; i++, k++, code++) {
      if (len <= 9) {
        const shift = 9 - len;
        for (let j = 0; j < 1 << shift; j++) lookup[(code << shift) | j] = (len << 8) | values[k];
      }
    }
    if (counts[len - 1] > 0) maxcode[len] = code - 1;
    if (code > 1 << len) throw fail('invalid Huffman table (more codes than its lengths allow)');
    code <<= 1;
  }
  maxcode[17] = 0x7fffffff;
  return { maxcode, valptr, mincode, values, lookup };
}

/** A bit reader over the entropy-coded bytes from `pos`; markers read as zero bits (as libjpeg does). */
export class BitReader {
  constructor(data, pos) {
    this.data = data;
    this.pos = pos;
    this.acc = 0; // bits not yet read, the next one highest
    this.count = 0;
    this.marker = false; // a marker stopped the data
  }

  fill() {
    while (this.count <= 16) {
      let byte = 0;
      if (!this.marker) {
        if (this.pos >= this.data.length) throw fail('the file is truncated (it ends inside the image data)');
        byte = this.data[this.pos];
        if (byte === 0xff) {
          const next = this.data[this.pos + 1];
          if (next === 0) this.pos += 2;
          else { this.marker = true; byte = 0; }
        } else {
          this.pos++;
        }
      }
      this.acc = ((this.acc << 8) | byte) >>> 0;
      this.count += 8;
    }
  }

  bits(n) {
    if (n === 0) return 0;
    if (this.count < n) this.fill();
    this.count -= n;
    return (this.acc >>> this.count) & ((1 << n) - 1);
  }

  bit() {
    return this.bits(1);
  }

  /** A value of `size` bits, sign-extended as in T.81 F.2.2.1 (EXTEND). */
  receive(size) {
    if (size === 0) return 0;
    if (size > 16) throw fail('corrupt image data (a coefficient wider than 16 bits)');
    const v = this.bits(size);
    return v < 1 << (size - 1) ? v - (1 << size) + 1 : v;
  }

  decode(table) {
    if (!table) throw fail('a scan uses a Huffman table that was never defined');
    if (this.count < 16) this.fill();
    const peek = (this.acc >>> (this.count - 9)) & 511;
    const hit = table.lookup[peek];
    if (hit !== 0) {
      this.count -= hit >> 8;
      return hit & 255;
    }
    let code = (this.acc >>> (this.count - 9)) & 511;
    this.count -= 9;
    let len = 9;
    while (code > table.maxcode[len]) {
      code = (code << 1) | this.bit();
      if (++len > 16) throw fail('corrupt image data (an invalid Huffman code)');
    }
    return table.values[table.valptr[len] + code - table.mincode[len]] ?? 0;
  }

  /** At a restart interval's end: drop the partial byte and step over the RSTn marker. */
  restart() {
    this.count = 0;
    this.acc = 0;
    if (!this.marker) {
      // the marker is next, possibly after some garbage bytes: look for it
      while (this.pos + 1 < this.data.length && !(this.data[this.pos] === 0xff && this.data[this.pos + 1] !== 0 &&
        this.data[this.pos + 1] !== 0xff)) this.pos++;
    }
    if (this.pos + 1 < this.data.length && this.data[this.pos + 1] >= 0xd0 && this.data[this.pos + 1] <= 0xd7) this.pos += 2;
    this.marker = false;
  }

  /** Where the scan's data ended: the next marker's position. */
  end() {
    let p = this.pos;
    while (p + 1 < this.data.length && !(this.data[p] === 0xff && this.data[p + 1] !== 0 &&
      !(this.data[p + 1] >= 0xd0 && this.data[p + 1] <= 0xd7))) p++;
    return p;
  }
}

// ---- one block of each kind of scan (T.81 F.2.2, G.1.2) -------------------------------------------------------

function blockSequential(r, c, coef, at, s) {
  const t = r.decode(s.dc);
  c.pred += r.receive(t);
  coef[at] = c.pred;
  for (let k = 1; k < 64;) {
    const rs = r.decode(s.ac);
    const run = rs >> 4;
    const size = rs & 15;
    if (size === 0) {
      if (run !== 15) break;
      k += 16;
      continue;
    }
    k += run;
    if (k > 63) break; // corrupt: the run ran past the block
    coef[at + ZIGZAG[k]] = r.receive(size);
    k++;
  }
}

function blockDcFirst(r, c, coef, at, s) {
  const t = r.decode(s.dc);
  c.pred += r.receive(t);
  coef[at] = c.pred * (1 << s.al);
}

function blockDcRefine(r, c, coef, at, s) {
  if (r.bit()) coef[at] |= 1 << s.al;
}

function blockAcFirst(r, c, coef, at, s) {
  if (s.eobrun > 0) { s.eobrun--; return; }
  for (let k = s.ss; k <= s.se;) {
    const rs = r.decode(s.ac);
    const run = rs >> 4;
    const size = rs & 15;
    if (size === 0) {
      if (run < 15) {
        s.eobrun = (1 << run) - 1 + r.bits(run);
        break;
      }
      k += 16;
      continue;
    }
    k += run;
    if (k > 63) break;
    coef[at + ZIGZAG[k]] = r.receive(size) * (1 << s.al);
    k++;
  }
}

// Successive approximation of the AC coefficients (libjpeg's decode_mcu_AC_refine).
function blockAcRefine(r, c, coef, at, s) {
  const p1 = 1 << s.al;
  const m1 = -1 << s.al;
  const correct = (pos) => {
    if (r.bit() && (coef[pos] & p1) === 0) coef[pos] += coef[pos] >= 0 ? p1 : m1;
  };
  let k = s.ss;
  if (s.eobrun <= 0) {
    for (; k <= s.se; k++) {
      const rs = r.decode(s.ac);
      let run = rs >> 4;
      let value = 0;
      if (rs & 15) {
        value = r.bit() ? p1 : m1;
      } else if (run !== 15) {
        s.eobrun = (1 << run) + r.bits(run);
        break;
      }
      for (; k <= s.se; k++) {
        const pos = at + ZIGZAG[k];
        if (coef[pos] !== 0) correct(pos);
        else if (--run < 0) break;
      }
      if (value && k <= s.se) coef[at + ZIGZAG[k]] = value;
    }
  }
  if (s.eobrun > 0) {
    for (; k <= s.se; k++) if (coef[at + ZIGZAG[k]] !== 0) correct(at + ZIGZAG[k]);
    s.eobrun--;
  }
}

function blockKind(frame, s) {
  if (!frame.progressive) return blockSequential;
  if (s.ss === 0) return s.ah === 0 ? blockDcFirst : blockDcRefine;
  return s.ah === 0 ? blockAcFirst : blockAcRefine;
}

/**
 * Decodes one scan into the components' coefficient arrays; returns the position of the marker after its data.
 * @param {Uint8Array} data
 * @param {object} frame { progressive, mcusPerLine, mcusPerColumn, components: [{ h, v, blocksPerLine,
 *   blocksPerColumn, stride (blocks per padded row), coef: Int16Array }] }
 * @param {object} scan { components: [{ component, dc, ac }], ss, se, ah, al, restart, start }
 */
export function decodeScan(data, frame, scan) {
  const r = new BitReader(data, scan.start);
  const kind = blockKind(frame, scan);
  const state = { ss: scan.ss, se: scan.se, al: scan.al, eobrun: 0, dc: null, ac: null };
  const parts = scan.components.map((p) => ({ ...p, pred: 0 }));
  const single = parts.length === 1;
  const c0 = parts[0].component;
  const mcus = single ? c0.blocksPerLine * c0.blocksPerColumn : frame.mcusPerLine * frame.mcusPerColumn;
  const oneBlock = (p, row, col) => {
    state.dc = p.dc;
    state.ac = p.ac;
    kind(r, p, p.component.coef, 64 * (row * p.component.stride + col), state);
  };
  for (let m = 0; m < mcus; m++) {
    if (scan.restart > 0 && m > 0 && m % scan.restart === 0) {
      r.restart();
      state.eobrun = 0;
      for (const p of parts) p.pred = 0;
    }
    if (single) {
      oneBlock(parts[0], Math.floor(m / c0.blocksPerLine), m % c0.blocksPerLine);
      continue;
    }
    const mr = Math.floor(m / frame.mcusPerLine);
    const mc = m % frame.mcusPerLine;
    for (const p of parts) {
      const { h, v } = p.component;
      for (let y = 0; y < v; y++) for (let x = 0; x < h; x++) oneBlock(p, mr * v + y, mc * h + x);
    }
  }
  return r.end();
}
