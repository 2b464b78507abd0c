// Input checks and text preparation shared by the task modules (wasm/pipelines/*.js); not a task itself.
//
// Errors: a value of the wrong JS type is a TypeError; a number that is NaN, ±Infinity, not an integer or outside
// its range, or an image whose byte count does not match its size, is a RangeError; both name the option or
// argument. Everything is checked in JS before the engine is called, so bad input never reaches WebAssembly.
//
// Strings: lone UTF-16 surrogates (an unpaired \uD800–\uDFFF) are replaced by U+FFFD, as TextEncoder does — one
// code unit for one, so string indices are unchanged. (Without this, Embind's UTF-8 conversion would pair a lone
// surrogate with the character after it.)

/**
 * The options object of a pipeline or a call: undefined/null → {}; anything but a plain object → TypeError; a key
 * not in `known` → TypeError naming it and the known ones (a typo must never silently fall back to a default).
 */
export function checkOptions(options, known, where) {
  if (options === undefined || options === null) return {};
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`attnlens: ${where} options must be an object`);
  }
  const unknown = Object.keys(options).filter((k) => !known.includes(k));
  if (unknown.length > 0) {
    throw new TypeError(`attnlens: unknown ${where} option${unknown.length > 1 ? 's' : ''} ` +
      `${unknown.map((k) => `"${k}"`).join(', ')} (known: ${known.length > 0 ? known.join(', ') : 'none'})`);
  }
  return options;
}

/** Throws a TypeError / RangeError naming `name` unless `value` is undefined or an integer in [lo, hi]. */
export function checkInt(value, name, lo, hi) {
  if (value === undefined) return undefined;
  if (typeof value !== 'number') {
    throw new TypeError(`attnlens: ${name} must be an integer in [${lo}, ${hi}], got ${describe(value)}`);
  }
  if (!Number.isInteger(value) || value < lo || value > hi) {
    throw new RangeError(`attnlens: ${name} must be an integer in [${lo}, ${hi}], got ${String(value)}`);
  }
  return value;
}

/** Throws unless `value` is undefined or a finite number. */
export function checkFinite(value, name) {
  if (value === undefined) return undefined;
  if (typeof value !== 'number') throw new TypeError(`attnlens: ${name} must be a finite number, got ${describe(value)}`);
  if (!Number.isFinite(value)) throw new RangeError(`attnlens: ${name} must be a finite number, got ${String(value)}`);
  return value;
}

/** Throws unless `value` is undefined or a boolean. */
export function checkBool(value, name) {
  if (value !== undefined && typeof value !== 'boolean') {
    throw new TypeError(`attnlens: ${name} must be a boolean, got ${describe(value)}`);
  }
  return value;
}

export function describe(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return value.constructor?.name ?? 'object';
  if (typeof value === 'string') return `a string`;
  if (typeof value === 'symbol' || typeof value === 'function') return typeof value;
  if (typeof value === 'bigint') return `${String(value)}n (a BigInt)`;
  return `${String(value)} (${typeof value})`;
}

/** True when the ArrayBuffer under `view` was detached (transferred with postMessage/structuredClone). */
export function isDetached(view) {
  const buffer = view.buffer;
  if (typeof buffer.detached === 'boolean') return buffer.detached;
  if (buffer.byteLength !== 0 || view.byteLength !== 0) return false;
  try {
    new Uint8Array(buffer); // eslint-disable-line no-new
    return false;
  } catch {
    return true;
  }
}

const isShared = (view) => typeof SharedArrayBuffer === 'function' && view.buffer instanceof SharedArrayBuffer;

/**
 * Bytes the engine can read: a detached buffer is a TypeError naming `what`; a SharedArrayBuffer-backed view is
 * copied first when `copyShared` (TextDecoder and Embind's std::string refuse or race on shared memory).
 */
export function checkBytes(view, what, { copyShared = true } = {}) {
  if (isDetached(view)) {
    throw new TypeError(`attnlens: ${what} is a view of a detached ArrayBuffer (it was transferred, e.g. with ` +
      'postMessage or structuredClone); pass a copy that this thread still owns');
  }
  if (copyShared && isShared(view)) return new Uint8Array(view); // a copy into an ordinary ArrayBuffer
  return view;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** The string with every lone surrogate replaced by U+FFFD (same length). */
export function toWellFormed(text) {
  if (typeof text.isWellFormed === 'function') return text.isWellFormed() ? text : text.toWellFormed();
  return text.replace(LONE_SURROGATE, '\uFFFD');
}
