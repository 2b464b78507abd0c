#!/usr/bin/env node
// The committed converted bundles of the Hugging Face parity fixtures come from the converter, and stay its output:
// every tests/fixtures/hf/<arch>-<size>/hf/ (a Hugging Face folder written by models/training/hf/make_fixtures.py)
// is converted, named <arch>-<size>, into tests/fixtures/hf/<arch>-<size>/bundle/.
//
//   node scripts/convert-fixtures.mjs --write [NAME ...]   convert and (re)write the bundles
//   node scripts/convert-fixtures.mjs [NAME ...]           check: exit 1 naming each bundle file that differs
//                                                          byte for byte from a fresh conversion (tests/node/convert.test.mjs)
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { convert } from '../wasm/convert/index.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const FIXTURES = path.join(ROOT, 'tests', 'fixtures', 'hf');

/** Fixture names (folders of tests/fixtures/hf with an hf/ inside), sorted. */
export function fixtureNames() {
  if (!existsSync(FIXTURES)) return [];
  return readdirSync(FIXTURES).filter((d) => existsSync(path.join(FIXTURES, d, 'hf', 'config.json'))).sort();
}

/** Converts fixture `name`: { files } as convert() returns them. */
export function convertFixture(name) {
  return convert(path.join(FIXTURES, name, 'hf'), { name });
}

/** Differences between the committed bundle of `name` and a fresh conversion (an empty array when identical). */
export async function checkFixture(name) {
  const dir = path.join(FIXTURES, name, 'bundle');
  const { files } = await convertFixture(name);
  const problems = [];
  const committed = existsSync(dir) ? readdirSync(dir) : [];
  for (const [f, bytes] of Object.entries(files)) {
    const p = path.join(dir, f);
    if (!existsSync(p)) problems.push(`${name}/bundle/${f} is missing`);
    else if (Buffer.compare(readFileSync(p), Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length)) !== 0) {
      problems.push(`${name}/bundle/${f} differs from the converter's output`);
    }
  }
  for (const f of committed) if (!(f in files)) problems.push(`${name}/bundle/${f} is not written by the converter`);
  return problems;
}

async function main(argv) {
  const write = argv.includes('--write');
  const names = argv.filter((a) => !a.startsWith('--'));
  let failed = 0;
  for (const name of names.length ? names : fixtureNames()) {
    try {
      if (write) {
        const out = path.join(FIXTURES, name, 'bundle');
        rmSync(out, { recursive: true, force: true });
        await convert(path.join(FIXTURES, name, 'hf'), { name, out });
        console.log(`wrote tests/fixtures/hf/${name}/bundle`);
      } else {
        const problems = await checkFixture(name);
        for (const p of problems) console.error(`MISMATCH ${p}`);
        if (problems.length) failed++;
        else console.log(`ok ${name}`);
      }
    } catch (err) {
      failed++;
      console.error(`convert-fixtures: ${name}: ${err.message}`);
    }
  }
  if (failed && !write) console.error('convert-fixtures: run node scripts/convert-fixtures.mjs --write and commit the bundles if the change is intended');
  return failed ? 1 : 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main(process.argv.slice(2));
}
