// Command-line options of the repository's scripts and benchmarks: `--name value` pairs and `--flag`s.
//   const opt = options(process.argv.slice(2)); opt.get('--rounds', 5); opt.has('--no-page')
export function options(argv) {
  return {
    get(name, fallback) {
      const i = argv.indexOf(name);
      return i >= 0 && i + 1 < argv.length ? argv[i + 1] : fallback;
    },
    has: (name) => argv.includes(name),
  };
}
