// wasm/index.d.ts against the engine's contracts (src/api/contract.h, exported by the module as contracts()): every
// declared option is in its options interface with its range or default in the doc comment, every declared result
// field is in its result interface, and nothing in those interfaces is undeclared — drift either way fails.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import { init } from '../../wasm/index.js';
import { initHf } from '../../wasm/core.js';
import { checkContractOptions, contracts } from '../../wasm/pipelines/contract.js';

const DTS = readFileSync(new URL('../../wasm/index.d.ts', import.meta.url), 'utf8');

// Which interfaces of index.d.ts publish each contract (task/entry).
const PUBLISHED = {
  'sentiment-analysis/': { result: 'SentimentResult', call: 'SentimentRunOptions', creation: 'PipelineOptions' },
  'number-sorting/': { result: 'PointerSortResult', call: 'PointerSortRunOptions', creation: 'PipelineOptions' },
  'visual-question-answering/': { result: 'VqaResult', call: 'VqaRunOptions', creation: 'PipelineOptions' },
  'image-to-text/': { result: 'CaptionResult', call: 'CaptionRunOptions', creation: 'PipelineOptions' },
  'image-to-text/attend': { result: 'CaptionResult', call: 'CaptionAttendOptions', creation: 'PipelineOptions' },
  'translation/': { result: 'TranslationResult', call: 'TranslationRunOptions', creation: 'PipelineOptions' },
  'translation/align': { result: 'TranslationResult', call: 'TranslationRunOptions', creation: 'PipelineOptions' },
  // The converted models' module (initHf()) only.
  'text-generation/': { result: 'TextGenerationResult', call: 'TextGenerationRunOptions', creation: 'PipelineOptions' },
  'text-classification/': { result: 'TextClassificationResult', call: 'HfEncoderRunOptions', creation: 'PipelineOptions' },
  'feature-extraction/': { result: 'FeatureExtractionResult', call: 'HfEncoderRunOptions', creation: 'PipelineOptions' },
  'image-classification/': { result: 'TextClassificationResult', call: 'HfEncoderRunOptions', creation: 'PipelineOptions' },
};
const HF_ONLY = ['text-generation/', 'text-classification/', 'feature-extraction/', 'image-classification/'];

/** The members of `export interface name` as { name → { doc, type } } (doc: the /** … *\/ comment before it). */
function members(name) {
  const start = DTS.search(new RegExp(`export interface ${name}\\b[^{]*\\{`));
  assert.ok(start >= 0, `index.d.ts has no interface ${name}`);
  const open = DTS.indexOf('{', start);
  let depth = 0;
  let end = open;
  for (; end < DTS.length; end++) {
    if (DTS[end] === '{') depth++;
    if (DTS[end] === '}' && --depth === 0) break;
  }
  const body = DTS.slice(open + 1, end);
  const out = new Map();
  const re = /(\/\*\*((?:[^*]|\*(?!\/))*)\*\/\s*)?\n {2}(\w+)\??: ([^;]+);/g;
  for (let m = re.exec(body); m !== null; m = re.exec(body)) out.set(m[3], { doc: m[2] ?? '', type: m[4] });
  return out;
}

function optionMentions(spec, member) {
  const text = `${member.doc} ${member.type}`;
  if (spec.kind === 'integer') return text.includes(`${spec.min}..${spec.max}`);
  if (spec.kind === 'enum' || spec.kind === 'boolean-or-kinds') return spec.values.every((v) => text.includes(`'${v}'`));
  if (spec.default === null) return /default: the model/i.test(text);
  return new RegExp(`default ${JSON.stringify(spec.default)}`, 'i').test(text);
}

test('index.d.ts publishes exactly the declared options and result fields, with ranges and defaults', async () => {
  await init();
  // The shipped module declares every task but the converted models'; the converted models' module all of them.
  const keys = (list) => list.map((c) => `${c.task}/${c.entry}`).sort();
  assert.deepEqual(keys(contracts()), Object.keys(PUBLISHED).filter((k) => !HF_ONLY.includes(k)).sort());
  const all = contracts(await initHf());
  assert.deepEqual(keys(all), Object.keys(PUBLISHED).sort());
  const declared = new Map(); // interface → names some contract declares in it
  const note = (iface, name) => declared.set(iface, (declared.get(iface) ?? new Set()).add(name));
  for (const c of all) {
    const where = PUBLISHED[`${c.task}/${c.entry}`];
    const result = members(where.result);
    for (const f of c.result) {
      assert.ok(result.has(f.name), `${where.result} lacks the declared field ${f.name} (${c.task} ${c.entry})`);
      note(where.result, f.name);
    }
    for (const spec of c.options) {
      const iface = where[spec.given];
      const m = members(iface).get(spec.name);
      assert.ok(m, `${iface} lacks the declared option ${spec.name} (${c.task} ${c.entry})`);
      assert.ok(optionMentions(spec, m), `${iface}.${spec.name}: its doc comment must state ${spec.kind === 'integer'
        ? `the range ${spec.min}..${spec.max}` : `the default (${JSON.stringify(spec.default)})`}; it says: ${m.doc.trim()}`);
      note(iface, spec.name);
      if (spec.alias) {
        const old = members(iface).get(spec.alias);
        assert.ok(old && /@deprecated/.test(old.doc), `${iface}.${spec.alias}: the old name, marked @deprecated`);
        note(iface, spec.alias);
      }
    }
  }
  const loadOptions = new Set(members('LoadOptions').keys());
  for (const [iface, names] of declared) {
    for (const name of members(iface).keys()) {
      if (iface === 'PipelineOptions' && loadOptions.has(name)) continue;
      assert.ok(names.has(name), `${iface}.${name} is in index.d.ts but no contract declares it`);
    }
  }
});

test('options are checked as declared, deprecated aliases renamed', async () => {
  await init();
  const sorting = contracts().find((c) => c.task === 'number-sorting');
  assert.deepEqual(checkContractOptions(sorting, { encoder_attentions: false }, 'call', 'x'), { output_attentions: false });
  assert.throws(() => checkContractOptions(sorting, { encoder_attentions: 1 }, 'call', 'x'), TypeError);
  const tr = contracts().find((c) => c.task === 'translation' && c.entry === '');
  assert.throws(() => checkContractOptions(tr, { num_beams: 0 }, 'call', 'x'), { name: 'RangeError', message: /\[1, 64\]/ });
  assert.throws(() => checkContractOptions(tr, { alignment_layer: 1024 }, 'call', 'x'), { name: 'RangeError', message: /\[0, 1023\]/ });
  assert.throws(() => checkContractOptions(tr, { beams: 2 }, 'call', 'x'), { name: 'TypeError', message: /unknown x option "beams"/ });
});
