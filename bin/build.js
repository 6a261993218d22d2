// The compiled copy of src/ that bin/svc.js runs: every .ts file compiled to .js by esbuild (one
// output file per source file, relative imports renamed .ts -> .js), every other file (templates,
// migrations, static files, the worker threads' .mjs) copied as is, all under
// dist/<fingerprint>/. The fingerprint covers each source file's path, size and modification
// time, so an edited, added, removed or renamed file makes a new build before anything runs, and
// two processes starting at once never write into a build the other one runs.
//   node bin/build.js              compile when the sources changed (npm's prepare, bin/svc.js)
//   node bin/build.js --template   also prepare the embedded databases a first start copies (embedded-template.ts)
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const srcDir = path.join(root, 'src');
export const distDir = path.join(root, 'dist');
/** Changed when the way of building changes: earlier builds are then out of date. */
const BUILD_FORMAT = 1;
/** Builds kept besides the newest; older ones go unless a running process uses them (it may still read its templates). */
const KEEP_BUILDS = 3;
const IN_USE = '.in-use-';
const COMPLETE = '.complete';

/** Every file under src/, relative to it, with its size and modification time. */
function sourceFiles(dir = srcDir, prefix = '') {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const rel = prefix + entry.name;
    if (entry.isDirectory()) out.push(...sourceFiles(path.join(dir, entry.name), `${rel}/`));
    else if (entry.isFile()) {
      const st = fs.statSync(path.join(dir, entry.name));
      out.push({ rel, size: st.size, mtimeMs: st.mtimeMs });
    }
  }
  return out;
}

function fingerprint(files) {
  const hash = createHash('sha256').update(`format ${BUILD_FORMAT}\n`);
  for (const f of [...files].sort((a, b) => (a.rel < b.rel ? -1 : 1))) hash.update(`${f.rel}\0${f.size}\0${f.mtimeMs}\n`);
  return hash.digest('hex').slice(0, 16);
}

/** The directory of the build of the current sources (it may not exist yet). */
export function currentBuild() {
  const files = sourceFiles();
  return { dir: path.join(distDir, `build-${fingerprint(files)}`), files };
}

const isComplete = (dir) => fs.existsSync(path.join(dir, COMPLETE));

/** esbuild plugin: every import stays an import; a relative one to a .ts file names the .js file. */
const keepImports = {
  name: 'keep-imports',
  setup(build) {
    build.onResolve({ filter: /.*/ }, (args) => {
      if (args.kind === 'entry-point') return undefined;
      const renamed = /^\.\.?\//.test(args.path) ? args.path.replace(/\.ts$/, '.js') : args.path;
      return { path: renamed, external: true };
    });
  },
};

async function compile(files, outDir) {
  const { build } = await import('esbuild');
  const ts = files.filter((f) => f.rel.endsWith('.ts') && !f.rel.endsWith('.d.ts'));
  await build({
    entryPoints: ts.map((f) => path.join(srcDir, f.rel)),
    outbase: srcDir,
    outdir: outDir,
    bundle: true,
    plugins: [keepImports],
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: 'linked',
    logLevel: 'error',
  });
  for (const f of files) {
    if (f.rel.endsWith('.ts')) continue;
    const to = path.join(outDir, f.rel);
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.copyFileSync(path.join(srcDir, f.rel), to);
  }
}

/** Builds the current sources unless already built; returns the build's directory. */
export async function ensureBuilt() {
  const { dir, files } = currentBuild();
  if (isComplete(dir)) return dir;
  fs.mkdirSync(distDir, { recursive: true });
  const tmp = `${dir}.tmp-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  await compile(files, tmp);
  fs.writeFileSync(path.join(tmp, COMPLETE), `${new Date().toISOString()}\n`);
  try {
    fs.renameSync(tmp, dir);
  } catch (e) {
    // Another process built the same sources meanwhile: its build is the same.
    fs.rmSync(tmp, { recursive: true, force: true });
    if (!isComplete(dir)) throw e;
  }
  removeOldBuilds(dir);
  return dir;
}

/** Marks a build as used by this process until it exits (removeOldBuilds leaves it). */
export function useBuild(dir) {
  const marker = path.join(dir, `${IN_USE}${process.pid}`);
  try {
    fs.writeFileSync(marker, '');
    process.once('exit', () => fs.rmSync(marker, { force: true }));
  } catch {
    // A build that cannot be marked (read-only install) is never removed either: only builds remove builds.
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
}

const inUse = (dir) =>
  fs
    .readdirSync(dir)
    .filter((f) => f.startsWith(IN_USE))
    .some((f) => alive(Number(f.slice(IN_USE.length))));

function removeOldBuilds(current) {
  const builds = fs
    .readdirSync(distDir)
    .filter((name) => /^build-[0-9a-f]+$/.test(name) && path.join(distDir, name) !== current)
    .map((name) => ({ dir: path.join(distDir, name), mtimeMs: fs.statSync(path.join(distDir, name)).mtimeMs }))
    .sort((a, b) => b.mtimeMs - a.mtimeMs);
  for (const old of builds.slice(KEEP_BUILDS)) {
    if (!inUse(old.dir)) fs.rmSync(old.dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dir = await ensureBuilt();
  console.log(`svc: compiled into ${path.relative(root, dir)}`);
  if (process.argv.includes('--template')) {
    const { prepareEmbeddedTemplates } = await import(path.join(dir, 'db', 'embedded-template.js'));
    for (const file of await prepareEmbeddedTemplates()) console.log(`svc: embedded database template ${path.relative(root, file)}`);
  }
}
