#!/usr/bin/env node
// Entry point: runs the CLI compiled into dist/ (bin/build.js; npm's prepare builds it at install).
// Sources changed since (an edit, a git pull) are compiled first, so what runs is always the
// current code. Where dist/ cannot be written, the TypeScript runs through tsx (slower start).
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ensureBuilt, root, useBuild } from './build.js';

let build;
try {
  build = await ensureBuilt();
} catch (e) {
  process.stderr.write(`svc: cannot compile into dist/ (${e.message}); running the TypeScript sources\n`);
}
if (build) {
  useBuild(build);
  await import(pathToFileURL(path.join(build, 'cli', 'main.js')).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(path.join(root, 'src', 'cli', 'main.ts')).href);
}
