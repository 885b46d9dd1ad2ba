// Bundles the extension (and the node tests) with esbuild: one CommonJS file each, `vscode` left external.
import { build } from 'esbuild';

const common = { bundle: true, platform: 'node', target: 'node20', format: 'cjs', sourcemap: true, logLevel: 'warning' };

await build({ ...common, entryPoints: ['src/extension.ts'], outfile: 'out/extension.js', external: ['vscode'], minify: true });
await build({
  ...common,
  entryPoints: ['test/config.test.ts', 'test/server.test.ts', 'test/manifest.test.ts', 'test/activate.test.ts',
    'test/graph.test.ts'],
  outdir: 'out/test',
  external: ['vscode'],
});
