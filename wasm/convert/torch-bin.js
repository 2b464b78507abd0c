// pytorch_model.bin read WITHOUT running pickle. torch.save (zip format, PyTorch ≥ 1.6) writes a zip archive of
// stored (uncompressed) entries: <archive>/data.pkl, a pickle of the state_dict whose tensors refer to storages by
// persistent id, and <archive>/data/<key>, each storage's raw little-endian bytes. data.pkl is read by a small
// interpreter of pickle's opcodes that builds only dicts, lists, tuples, strings, numbers and the allow-listed
// globals below (tensor rebuilding, typed storages, OrderedDict); any other global is refused by name. The legacy
// non-zip format (PyTorch < 1.6) is refused with a message.
import { ConvertError } from './architectures.js';

const STORAGES = { FloatStorage: 'F32', HalfStorage: 'F16', BFloat16Storage: 'BF16', DoubleStorage: 'F64', LongStorage: 'I64',
  IntStorage: 'I32', ShortStorage: 'I16', CharStorage: 'I8', ByteStorage: 'U8', BoolStorage: 'BOOL' };
const SIZES = { F32: 4, F16: 2, BF16: 2, F64: 8, I64: 8, I32: 4, I16: 2, I8: 1, U8: 1, BOOL: 1 };
const GLOBALS = new Set(['torch._utils._rebuild_tensor_v2', 'torch._utils._rebuild_parameter', 'collections.OrderedDict',
  ...Object.keys(STORAGES).map((s) => `torch.${s}`)]);
const MAX_DEPTH = 1 << 20;

/** The zip's entries: name → { offset, size } of stored data. */
export function readZip(bytes, file) {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const fail = (what, why = ' (a truncated or corrupt zip?)') => {
    throw new ConvertError(`${file}: ${what}${why}`);
  };
  let eocd = -1;
  for (let i = bytes.length - 22; i >= Math.max(0, bytes.length - 22 - 65535); i--) {
    if (dv.getUint32(i, true) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) fail('no end of central directory');
  let count = dv.getUint16(eocd + 10, true);
  let cdSize = dv.getUint32(eocd + 12, true);
  let cdOffset = dv.getUint32(eocd + 16, true);
  if (cdOffset === 0xffffffff || count === 0xffff || cdSize === 0xffffffff) { // zip64
    const loc = eocd - 20;
    if (loc < 0 || dv.getUint32(loc, true) !== 0x07064b50) fail('zip64 locator missing');
    const rec = Number(dv.getBigUint64(loc + 8, true));
    if (rec + 56 > bytes.length || dv.getUint32(rec, true) !== 0x06064b50) fail('zip64 end record missing');
    count = Number(dv.getBigUint64(rec + 32, true));
    cdSize = Number(dv.getBigUint64(rec + 40, true));
    cdOffset = Number(dv.getBigUint64(rec + 48, true));
  }
  if (cdOffset + cdSize > bytes.length) fail('the central directory runs past the end');
  const entries = new Map();
  let p = cdOffset;
  for (let n = 0; n < count; n++) {
    if (p + 46 > bytes.length || dv.getUint32(p, true) !== 0x02014b50) fail(`central directory entry ${n} is damaged`);
    const method = dv.getUint16(p + 10, true);
    let size = dv.getUint32(p + 20, true);
    let usize = dv.getUint32(p + 24, true);
    const nameLen = dv.getUint16(p + 28, true);
    const extraLen = dv.getUint16(p + 30, true);
    const commentLen = dv.getUint16(p + 32, true);
    let local = dv.getUint32(p + 42, true);
    if (p + 46 + nameLen + extraLen > bytes.length) fail(`central directory entry ${n} runs past the end`);
    const name = new TextDecoder().decode(bytes.subarray(p + 46, p + 46 + nameLen));
    for (let x = p + 46 + nameLen; x + 4 <= p + 46 + nameLen + extraLen;) { // zip64 extra field: the 0xffffffff values
      const id = dv.getUint16(x, true);
      const len = dv.getUint16(x + 2, true);
      if (id === 1) {
        let q = x + 4;
        if (usize === 0xffffffff) { usize = Number(dv.getBigUint64(q, true)); q += 8; }
        if (size === 0xffffffff) { size = Number(dv.getBigUint64(q, true)); q += 8; }
        if (local === 0xffffffff) { local = Number(dv.getBigUint64(q, true)); }
      }
      x += 4 + len;
    }
    if (method !== 0 || size !== usize) fail(`${name} is compressed (method ${method}); torch.save stores entries uncompressed`, '');
    if (local + 30 > bytes.length || dv.getUint32(local, true) !== 0x04034b50) fail(`the local header of ${name} is damaged`);
    const offset = local + 30 + dv.getUint16(local + 26, true) + dv.getUint16(local + 28, true);
    if (offset + size > bytes.length) fail(`${name} runs past the end of the file`);
    entries.set(name, { offset, size });
    p += 46 + nameLen + extraLen + commentLen;
  }
  return entries;
}

class Reader {
  constructor(bytes, file) {
    this.b = bytes;
    this.dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.p = 0;
    this.file = file;
  }

  need(n) {
    if (n < 0 || this.p + n > this.b.length) throw new ConvertError(`${this.file}: data.pkl ends in the middle of an opcode (truncated?)`);
    const at = this.p;
    this.p += n;
    return at;
  }

  u8() { return this.b[this.need(1)]; }
  u16() { return this.dv.getUint16(this.need(2), true); }
  i32() { return this.dv.getInt32(this.need(4), true); }
  u32() { return this.dv.getUint32(this.need(4), true); }
  u64() {
    const v = this.dv.getBigUint64(this.need(8), true);
    if (v > BigInt(this.b.length)) throw new ConvertError(`${this.file}: data.pkl has a length of ${v} bytes, past its end`);
    return Number(v);
  }
  bytes(n) { const at = this.need(n); return this.b.subarray(at, at + n); }
  text(n) {
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(this.bytes(n));
    } catch (err) {
      if (err instanceof ConvertError) throw err;
      throw new ConvertError(`${this.file}: data.pkl has a string that is not UTF-8`);
    }
  }
  line() {
    const end = this.b.indexOf(10, this.p);
    if (end < 0) throw new ConvertError(`${this.file}: data.pkl ends in the middle of an opcode (truncated?)`);
    const s = new TextDecoder().decode(this.b.subarray(this.p, end));
    this.p = end + 1;
    return s;
  }
}

// Values the interpreter builds: JS numbers/strings/booleans/null, arrays (lists), { tuple: [...] }, Map (dicts),
// { global: 'module.name' }, { storage }, { tensor }.
const MARK = Symbol('mark');
const tuple = (items) => ({ tuple: items });

function leToBigInt(bytes) {
  let v = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) v = (v << 8n) | BigInt(bytes[i]);
  if (bytes.length && bytes[bytes.length - 1] & 0x80) v -= 1n << BigInt(8 * bytes.length);
  return v;
}

function callGlobal(fn, args, file) {
  const a = args.tuple;
  if (!a) throw new ConvertError(`${file}: data.pkl calls ${fn.global} with arguments that are not a tuple`);
  switch (fn.global) {
    case 'collections.OrderedDict':
      if (a.length) throw new ConvertError(`${file}: data.pkl builds an OrderedDict from arguments (not a state_dict)`);
      return new Map();
    case 'torch._utils._rebuild_parameter':
      return a[0];
    case 'torch._utils._rebuild_tensor_v2': {
      const [storage, offset, size, stride] = a;
      if (!storage?.storage || !Number.isSafeInteger(offset) || !size?.tuple || !stride?.tuple) {
        throw new ConvertError(`${file}: data.pkl rebuilds a tensor from arguments it cannot read`);
      }
      return { tensor: { storage: storage.storage, offset, shape: size.tuple, stride: stride.tuple } };
    }
    default:
      throw new ConvertError(`${file}: data.pkl calls ${fn.global}, which is not a function the converter builds`);
  }
}

/** Runs data.pkl's opcodes; returns the unpickled value. storage(pid) resolves a persistent id. */
function unpickle(bytes, file, storage) {
  const r = new Reader(bytes, file);
  let stack = [];
  const marks = [];
  const memo = new Map();
  const pop = () => {
    if (!stack.length) throw new ConvertError(`${file}: data.pkl pops an empty stack (corrupt pickle)`);
    return stack.pop();
  };
  const top = () => {
    if (!stack.length) throw new ConvertError(`${file}: data.pkl reads an empty stack (corrupt pickle)`);
    return stack[stack.length - 1];
  };
  const popMark = () => {
    if (!marks.length) throw new ConvertError(`${file}: data.pkl has no MARK where one is needed (corrupt pickle)`);
    const items = stack;
    stack = marks.pop();
    return items;
  };
  const push = (v) => {
    if (stack.length > MAX_DEPTH) throw new ConvertError(`${file}: data.pkl's stack grows past ${MAX_DEPTH} items`);
    stack.push(v);
  };
  const dict = (v) => {
    if (!(v instanceof Map)) throw new ConvertError(`${file}: data.pkl sets an item on something that is not a dict`);
    return v;
  };
  const key = (k) => {
    if (typeof k !== 'string' && typeof k !== 'number') throw new ConvertError(`${file}: data.pkl has a dict key that is not a string or number`);
    return k;
  };
  const global = (name) => {
    if (!GLOBALS.has(name)) {
      throw new ConvertError(`${file}: data.pkl names the global ${name}, which the converter refuses: it never runs pickle ` +
        'code and builds only tensors, storages and dicts (save the weights with safetensors to be sure)');
    }
    return { global: name };
  };
  for (;;) {
    const op = r.u8();
    switch (op) {
      case 0x80: r.u8(); break; // PROTO
      case 0x95: r.u64(); break; // FRAME
      case 0x2e: return pop(); // STOP
      case 0x28: marks.push(stack); stack = []; break; // MARK
      case 0x7d: push(new Map()); break; // EMPTY_DICT
      case 0x5d: push([]); break; // EMPTY_LIST
      case 0x29: push(tuple([])); break; // EMPTY_TUPLE
      case 0x74: push(tuple(popMark())); break; // TUPLE
      case 0x85: push(tuple([pop()])); break; // TUPLE1
      case 0x86: { const b = pop(); push(tuple([pop(), b])); break; } // TUPLE2
      case 0x87: { const c = pop(); const b = pop(); push(tuple([pop(), b, c])); break; } // TUPLE3
      case 0x6c: push(popMark()); break; // LIST
      case 0x64: { const items = popMark(); const d = new Map(); for (let i = 0; i + 1 < items.length; i += 2) d.set(key(items[i]), items[i + 1]); push(d); break; } // DICT
      case 0x61: { const v = pop(); const l = top(); if (!Array.isArray(l)) throw new ConvertError(`${file}: data.pkl appends to something that is not a list`); l.push(v); break; } // APPEND
      case 0x65: { const items = popMark(); const l = top(); if (!Array.isArray(l)) throw new ConvertError(`${file}: data.pkl appends to something that is not a list`); l.push(...items); break; } // APPENDS
      case 0x73: { const v = pop(); const k = pop(); dict(top()).set(key(k), v); break; } // SETITEM
      case 0x75: { const items = popMark(); const d = dict(top()); for (let i = 0; i + 1 < items.length; i += 2) d.set(key(items[i]), items[i + 1]); break; } // SETITEMS
      case 0x4e: push(null); break; // NONE
      case 0x88: push(true); break; // NEWTRUE
      case 0x89: push(false); break; // NEWFALSE
      case 0x4b: push(r.u8()); break; // BININT1
      case 0x4d: push(r.u16()); break; // BININT2
      case 0x4a: push(r.i32()); break; // BININT
      case 0x8a: { const v = leToBigInt(r.bytes(r.u8())); push(Number(v)); break; } // LONG1
      case 0x47: push(new DataView(r.bytes(8).slice().buffer).getFloat64(0, false)); break; // BINFLOAT
      case 0x58: push(r.text(r.u32())); break; // BINUNICODE
      case 0x8c: push(r.text(r.u8())); break; // SHORT_BINUNICODE
      case 0x8d: push(r.text(r.u64())); break; // BINUNICODE8
      case 0x55: push(r.text(r.u8())); break; // SHORT_BINSTRING
      case 0x54: push(r.text(r.u32())); break; // BINSTRING
      case 0x43: push(r.bytes(r.u8())); break; // SHORT_BINBYTES
      case 0x42: push(r.bytes(r.u32())); break; // BINBYTES
      case 0x71: memo.set(r.u8(), top()); break; // BINPUT
      case 0x72: memo.set(r.u32(), top()); break; // LONG_BINPUT
      case 0x94: memo.set(memo.size, top()); break; // MEMOIZE
      case 0x68: case 0x6a: { // BINGET, LONG_BINGET
        const i = op === 0x68 ? r.u8() : r.u32();
        if (!memo.has(i)) throw new ConvertError(`${file}: data.pkl reads memo ${i}, never stored (corrupt pickle)`);
        push(memo.get(i));
        break;
      }
      case 0x30: pop(); break; // POP
      case 0x32: push(top()); break; // DUP
      case 0x63: { const mod = r.line(); push(global(`${mod}.${r.line()}`)); break; } // GLOBAL
      case 0x93: { const name = pop(); const mod = pop(); push(global(`${mod}.${name}`)); break; } // STACK_GLOBAL
      case 0x52: { const args = pop(); const fn = pop(); if (!fn?.global) throw new ConvertError(`${file}: data.pkl calls something that is not a global`); push(callGlobal(fn, args, file)); break; } // REDUCE
      case 0x81: { const args = pop(); const cls = pop(); if (cls?.global !== 'collections.OrderedDict') throw new ConvertError(`${file}: data.pkl instantiates ${cls?.global ?? 'a non-class'}`); push(callGlobal(cls, args, file)); break; } // NEWOBJ
      case 0x62: { pop(); if (!(top() instanceof Map)) throw new ConvertError(`${file}: data.pkl sets the state of something that is not a dict`); break; } // BUILD: a state_dict's _metadata, not needed
      case 0x51: push(storage(pop())); break; // BINPERSID
      default:
        throw new ConvertError(`${file}: data.pkl uses the pickle opcode 0x${op.toString(16).padStart(2, '0')}, which the converter does not read`);
    }
  }
}

/** Copies a strided tensor view out of its storage bytes into contiguous little-endian bytes. */
function contiguous(t, file, name) {
  const { storage, offset, shape, stride } = t;
  const size = SIZES[storage.dtype];
  if (!shape.every((d) => Number.isSafeInteger(d) && d >= 0) || stride.length !== shape.length ||
      !stride.every((s) => Number.isSafeInteger(s) && s >= 0)) {
    throw new ConvertError(`${file}: tensor ${name} has a shape or stride the converter cannot read`);
  }
  const count = shape.reduce((a, b) => a * b, 1);
  if (!Number.isSafeInteger(count) || count > storage.numel) {
    throw new ConvertError(`${file}: tensor ${name} has more elements than its storage (${storage.numel})`);
  }
  const last = count ? offset + shape.reduce((a, d, i) => a + (d - 1) * stride[i], 0) : offset - 1;
  if (offset < 0 || last >= storage.numel) {
    throw new ConvertError(`${file}: tensor ${name} reaches element ${last} of a storage of ${storage.numel}`);
  }
  let expect = 1;
  let dense = true;
  for (let d = shape.length - 1; d >= 0; d--) {
    if (shape[d] !== 1 && stride[d] !== expect) dense = false;
    expect *= shape[d];
  }
  if (dense) return storage.bytes.slice(offset * size, (offset + count) * size);
  const out = new Uint8Array(count * size);
  const idx = new Array(shape.length).fill(0);
  for (let i = 0; i < count; i++) {
    let e = offset;
    for (let d = 0; d < shape.length; d++) e += idx[d] * stride[d];
    out.set(storage.bytes.subarray(e * size, (e + 1) * size), i * size);
    for (let d = shape.length - 1; d >= 0; d--) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

/** name → { dtype, shape, bytes } of the state_dict in a torch.save zip file. */
export function readTorchBin(bytes, file) {
  if (bytes.length >= 2 && bytes[0] === 0x80 && bytes[1] <= 5) {
    throw new ConvertError(`${file} is in PyTorch's legacy (pre-1.6, non-zip) format, which the converter does not read: ` +
      'load it in Python and save it again with torch.save (zip format) or as model.safetensors');
  }
  if (bytes.length < 4 || bytes[0] !== 0x50 || bytes[1] !== 0x4b) throw new ConvertError(`${file} is not a torch.save zip archive`);
  const zip = readZip(bytes, file);
  const pkl = [...zip.keys()].find((n) => n.endsWith('/data.pkl') || n === 'data.pkl');
  if (!pkl) throw new ConvertError(`${file}: the archive has no data.pkl`);
  const prefix = pkl.slice(0, -'data.pkl'.length);
  const entry = (n) => {
    const e = zip.get(prefix + n);
    return e && bytes.subarray(e.offset, e.offset + e.size);
  };
  const order = entry('byteorder');
  if (order && new TextDecoder().decode(order) !== 'little') throw new ConvertError(`${file}: big-endian storages are not supported`);
  const storages = new Map();
  const storage = (pid) => {
    const [kind, type, key, , numel] = pid?.tuple ?? [];
    const dtype = typeof type?.global === 'string' && STORAGES[type.global.replace(/^torch\./, '')];
    if (kind !== 'storage' || !dtype || typeof key !== 'string' || !Number.isSafeInteger(numel)) {
      throw new ConvertError(`${file}: data.pkl has a persistent id that is not a storage`);
    }
    if (!storages.has(key)) {
      const data = entry(`data/${key}`);
      if (!data) throw new ConvertError(`${file}: storage data/${key} is missing from the archive`);
      if (data.length < numel * SIZES[dtype]) {
        throw new ConvertError(`${file}: storage data/${key} has ${data.length} bytes, ${numel} × ${dtype} need ${numel * SIZES[dtype]}`);
      }
      storages.set(key, { dtype, numel, bytes: data });
    }
    return { storage: storages.get(key) };
  };
  let state = unpickle(entry('data.pkl'), file, storage);
  if (state instanceof Map && state.has('state_dict') && state.get('state_dict') instanceof Map) state = state.get('state_dict');
  if (!(state instanceof Map)) throw new ConvertError(`${file}: data.pkl does not hold a state_dict (a dict of tensors)`);
  const out = new Map();
  for (const [name, v] of state) {
    if (typeof name !== 'string' || !v?.tensor) throw new ConvertError(`${file}: state_dict entry ${name} is not a tensor`);
    out.set(name, { dtype: v.tensor.storage.dtype, shape: v.tensor.shape, bytes: contiguous(v.tensor, file, name) });
  }
  return out;
}
