// Bundles test/support/wire_entry.js for node: flatc --ts of the protocol's schema into a
// temporary folder, then esbuild (web/node_modules) as web/build.sh does. Returns the bundle's
// path, or { skip: reason } where flatc or the npm packages are missing (web/build.sh installs
// them; ctest runs after the build).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const web = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export function bundleWire() {
  const esbuild = join(web, 'node_modules', '.bin', 'esbuild');
  if (!existsSync(esbuild) || !existsSync(join(web, 'node_modules', 'flatbuffers'))) {
    return { skip: 'web/node_modules missing (web/build.sh runs npm ci)' };
  }
  try {
    execFileSync('flatc', ['--version'], { stdio: 'ignore' });
  } catch {
    return { skip: 'flatc not installed (Debian flatbuffers-compiler)' };
  }
  const dir = mkdtempSync(join(tmpdir(), 'swarmfield-web-test-'));
  execFileSync('flatc', ['--ts', '-o', join(dir, 'gen'), join(web, '..', 'protocol', 'schema', 'swarmfield.fbs')]);
  const out = join(dir, 'wire.mjs');
  execFileSync(esbuild, [join(web, 'test', 'support', 'wire_entry.js'), '--bundle', '--format=esm', '--platform=node',
    '--log-level=warning', `--alias:swarmfield-wire=${join(dir, 'gen', 'swarmfield_generated.ts')}`, `--outfile=${out}`],
  { env: { ...process.env, NODE_PATH: join(web, 'node_modules') } });
  return { path: out };
}
