// bin/svc.js runs the sources compiled into dist/ (bin/build.js): an edited, added or renamed
// source file is compiled before anything runs, so a developer who edits src/ and runs svc never
// runs stale code. Checked on a small project beside this one (the same bin/, its own src/).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const repo = process.cwd();
const project = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-build-'));
after(() => fs.rmSync(project, { recursive: true, force: true }));

fs.mkdirSync(path.join(project, 'bin'));
for (const f of ['svc.js', 'build.js']) fs.copyFileSync(path.join(repo, 'bin', f), path.join(project, 'bin', f));
fs.writeFileSync(path.join(project, 'package.json'), '{ "type": "module" }\n');
fs.symlinkSync(path.join(repo, 'node_modules'), path.join(project, 'node_modules'));

const write = (rel: string, text: string) => {
  const file = path.join(project, 'src', rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
};
const svc = () => execFileSync(process.execPath, [path.join(project, 'bin', 'svc.js')], { encoding: 'utf8' }).trim();

test('svc runs the current sources: after an edit, a new file, a rename; files beside the code come along', () => {
  write(
    'cli/main.ts',
    "import { word } from './word.ts';\nimport fs from 'node:fs';\nconst n: number = 1;\nconsole.log(word, n, fs.readFileSync(new URL('./data.sql', import.meta.url), 'utf8').trim());\n",
  );
  write('cli/word.ts', "export const word: string = 'one';\n");
  write('cli/data.sql', 'SELECT 1;\n');
  assert.equal(svc(), 'one 1 SELECT 1;');
  assert.equal(svc(), 'one 1 SELECT 1;', 'a second run uses the same build');

  write('cli/word.ts', "export const word: string = 'two';\n");
  write('cli/data.sql', 'SELECT 2;\n');
  assert.equal(svc(), 'two 1 SELECT 2;');

  // A rename keeps the file's modification time: the build still notices.
  fs.renameSync(path.join(project, 'src/cli/word.ts'), path.join(project, 'src/cli/other.ts'));
  write('cli/main.ts', "import { word } from './other.ts';\nconsole.log(word);\n");
  assert.equal(svc(), 'two');
  assert.ok(fs.readdirSync(path.join(project, 'dist')).filter((d) => d.startsWith('build-')).length <= 4, 'old builds are removed');
});

test('a build a running svc uses is kept while it runs, removed once it stopped and is old', async () => {
  const builds = () => fs.readdirSync(path.join(project, 'dist')).filter((d) => d.startsWith('build-'));
  write('cli/main.ts', "if (process.argv[2] === 'wait') setTimeout(() => undefined, 120000);\nconsole.log('running');\n");
  const child = spawn(process.execPath, [path.join(project, 'bin', 'svc.js'), 'wait'], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise((resolve) => child.stdout.once('data', resolve));
  const used = builds().find((d) => fs.existsSync(path.join(project, 'dist', d, `.in-use-${child.pid}`)));
  assert.ok(used, 'the running svc marks its build');
  for (let i = 0; i < 5; i++) {
    write('cli/main.ts', `console.log(${i});\n`);
    assert.equal(svc(), String(i));
  }
  assert.ok(builds().includes(used), 'kept while in use');
  child.kill();
  await new Promise((resolve) => child.once('exit', resolve));
  write('cli/main.ts', 'console.log(5);\n');
  assert.equal(svc(), '5');
  assert.ok(!builds().includes(used), 'removed once unused and not among the newest');
});
