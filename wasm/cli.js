#!/usr/bin/env node
// The package's command line (package.json "bin"): npx attnlens convert <hf-folder> <out> [--int8] [--task T] [--name N]
// Converts a Hugging Face model folder into an attnlens bundle (wasm/convert/index.js; README "Your own model").
import { convert } from './convert/index.js';

const USAGE = 'usage: attnlens convert <hf-folder> <out> [--int8] [--task TASK] [--name NAME]';

/** { input, out, options } from the arguments after "convert"; throws a usage error. */
function parseConvertArgs(args) {
  const positional = [];
  const options = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--int8') options.int8 = true;
    else if (a === '--task' || a === '--name') {
      if (i + 1 >= args.length) throw new Error(`${a} needs a value; ${USAGE}`);
      options[a.slice(2)] = args[++i];
    } else if (a.startsWith('-')) throw new Error(`unknown option ${a}; ${USAGE}`);
    else positional.push(a);
  }
  if (positional.length !== 2) throw new Error(USAGE);
  return { input: positional[0], out: positional[1], options };
}

async function main(argv) {
  if (argv[0] !== 'convert') {
    console.error(argv[0] === undefined || argv[0] === '--help' ? USAGE : `unknown command ${argv[0]}; ${USAGE}`);
    return 2;
  }
  let parsed;
  try {
    parsed = parseConvertArgs(argv.slice(1));
  } catch (err) {
    console.error(`attnlens: ${err.message}`);
    return 2;
  }
  try {
    const { files, config } = await convert(parsed.input, { ...parsed.options, out: parsed.out });
    const bytes = Object.values(files).reduce((a, f) => a + f.length, 0);
    console.log(`wrote ${parsed.out}: ${config.architecture} ${config.task}, ${Object.keys(files).length} files, ${bytes} bytes`);
    return 0;
  } catch (err) {
    console.error(`attnlens convert: ${err.message}`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
