// Replays the statements of SVC_BENCH_DUMP (bench/search.ts) on copies of package_search_index:
// node bench/replay-search.mjs <database url> <dump.json> <runs> <table> [<table> ...] [--explain] [--only=<regexp>]
// Each query's statements run with package_search_index renamed to each table, the tables taking turns
// run by run (so a change of the machine's load moves every column alike); prints the p50 of each.
import fs from 'node:fs';
import pg from 'pg';

const [url, dumpFile, runsArg, ...rest] = process.argv.slice(2);
const explain = rest.includes('--explain');
const onlyArg = rest.find((a) => a.startsWith('--only='));
const only = onlyArg ? new RegExp(onlyArg.slice(7)) : null;
const tables = rest.filter((a) => !a.startsWith('--'));
const runs = Number(runsArg);
const dump = JSON.parse(fs.readFileSync(dumpFile, 'utf8'));
const client = new pg.Client({ connectionString: url });
await client.connect();
await client.query("SET work_mem = '4MB'");
const p50 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const on = (text, t) => text.replace(/\bpackage_search_index\b/g, t);
for (const { query, statements } of dump) {
  if (only && !only.test(query)) continue;
  const times = Object.fromEntries(tables.map((t) => [t, []]));
  for (let i = 0; i < runs + 2; i++)
    for (const t of i % 2 ? [...tables].reverse() : tables) {
      const t0 = performance.now();
      for (const s of statements) await client.query(on(s.text, t), s.values);
      if (i >= 2) times[t].push(performance.now() - t0);
    }
  console.log(`${query.padEnd(58)} ${tables.map((t) => `${t} ${p50(times[t]).toFixed(1)}`).join('  ')}`);
  if (explain)
    for (const t of tables)
      for (const s of statements) {
        if (!/package_search_index/.test(s.text)) continue;
        const r = await client.query(`EXPLAIN (ANALYZE, BUFFERS) ${on(s.text, t)}`, s.values);
        console.log(`--- ${t}\n${r.rows.map((x) => x['QUERY PLAN']).join('\n')}`);
      }
}
await client.end();
