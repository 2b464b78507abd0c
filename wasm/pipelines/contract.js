// Each task's contract, as the engine declares it once (src/api/contract.h) and the module exports it
// (contracts(): JSON): { task, entry, options: [{ name, kind, given, min?, max?, values?, default, doc, alias?,
// engine }], result: [{ name, kind, doc, engine }] }. The pipelines check a caller's options against it before
// WebAssembly runs, so names, kinds and ranges are the engine's by construction.
//
// Errors (the wording of input.js): an unknown option, or a value of the wrong JS type, is a TypeError naming it; a
// number that is NaN, ±Infinity, not an integer or outside its range is a RangeError.
import { getModule } from '../core.js';
import { checkBool, checkFinite, checkInt, checkOptions, describe } from './input.js';

const parsed = new WeakMap(); // module → its contracts

/**
 * Every contract of `module` (parsed once per module): the shipped module's by default; the converted models'
 * module (initHf()) lists the HF tasks' contracts too.
 */
export function contracts(module = getModule()) {
  if (!parsed.has(module)) parsed.set(module, JSON.parse(module.contracts()));
  return parsed.get(module);
}

/** The contract of `task` (entry '' for the pipeline call, else a method such as 'align') in `module`'s list. */
export function contractOf(task, entry = '', module = undefined) {
  const c = contracts(module).find((x) => x.task === task && x.entry === entry);
  if (!c) throw new Error(`attnlens: no contract for ${task}${entry ? `.${entry}` : ''}`);
  return c;
}

function checkKinds(spec, v) {
  const kinds = spec.values;
  const message = `attnlens: ${spec.name} must be true, false or a non-empty list of ${kinds.map((k) => `'${k}'`).join(', ')}`;
  if (Array.isArray(v)) {
    const bad = v.filter((k) => !kinds.includes(k));
    if (bad.length > 0 || v.length === 0) throw new TypeError(`${message}${bad.length > 0 ? `, got ${JSON.stringify(bad[0])}` : ''}`);
    return v;
  }
  if (typeof v === 'string') {
    // One kind written without its list ('cross'): say how to ask for it rather than "must be a boolean".
    throw new TypeError(`${message}, got the string ${JSON.stringify(v)}` +
      (kinds.includes(v) ? ` (for only those maps: ['${v}'])` : ''));
  }
  return checkBool(v, spec.name);
}

/** One option's value checked as its declaration says (TypeError / RangeError naming it). */
export function checkOptionValue(spec, v) {
  switch (spec.kind) {
    case 'integer': return checkInt(v, spec.name, spec.min, spec.max);
    case 'number': return checkFinite(v, spec.name);
    case 'boolean': return checkBool(v, spec.name);
    case 'enum':
      if (!spec.values.includes(v)) {
        throw new TypeError(`attnlens: ${spec.name} must be one of ${spec.values.map((x) => `'${x}'`).join(', ')}, ` +
          `got ${typeof v === 'string' ? JSON.stringify(v) : describe(v)}`);
      }
      return v;
    case 'boolean-or-kinds': return checkKinds(spec, v);
    default: throw new Error(`attnlens: unknown option kind '${spec.kind}' of ${spec.name}`);
  }
}

/**
 * The options object of a pipeline or a call, checked against `contract`'s options given at `given` ('creation' or
 * 'call'; both with 'any'): unknown keys and bad values throw (see above); returns a new object with the given
 * values, a deprecated alias renamed to its option (the option itself wins when both are given).
 */
export function checkContractOptions(contract, options, given, where) {
  const specs = contract.options.filter((s) => given === 'any' || s.given === given);
  const known = specs.flatMap((s) => (s.alias ? [s.name, s.alias] : [s.name]));
  const o = checkOptions(options, known, where);
  const out = {};
  for (const spec of specs) {
    const v = o[spec.name] !== undefined ? o[spec.name] : (spec.alias ? o[spec.alias] : undefined);
    if (v !== undefined) out[spec.name] = checkOptionValue(spec, v);
  }
  return out;
}

/** The options of `checked` the engine reads (the declaration's engine options), as the JSON it takes. */
export function engineJson(contract, checked) {
  const names = contract.options.filter((s) => s.engine).map((s) => s.name);
  return JSON.stringify(Object.fromEntries(names.filter((k) => checked[k] !== undefined).map((k) => [k, checked[k]])));
}

/** The declared default of an option (null: the model's own). */
export function defaultOf(contract, name) {
  return contract.options.find((s) => s.name === name)?.default ?? null;
}
