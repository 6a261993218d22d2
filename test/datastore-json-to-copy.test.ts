// COPY text made straight from JSON bytes (large datastore_upsert requests) is the text copyValue
// makes from the parsed values, for every kind of column and every way JSON can write a value;
// malformed JSON is refused as JSON.parse refuses it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CopyWriter } from '../src/datastore/copy-writer.ts';
import { JsonRecordReader } from '../src/datastore/json-to-copy.ts';
import { copyValue, type Kind } from '../src/datastore/types.ts';

const KINDS: Kind[] = ['text', 'number', 'timestamp', 'bool', 'other', 'json', 'array'];

/** JSON texts of values, as clients write them (escapes, exponents, trailing zeros, nesting). */
const VALUES = [
  'null',
  'true',
  'false',
  '""',
  '"plain"',
  '"Curaçao ünïcode 中文"',
  String.raw`"tab\there \"quoted\" back\\slash \/ sl\u00e9 \ud83d\ude00 nl\nline cr\r \b\f"`,
  String.raw`"\u0009\u000a\u000d\u005c\u0022"`,
  String.raw`"lone \ud800 surrogate"`,
  String.raw`"\\N"`,
  String.raw`"\\."`,
  '0',
  '-0',
  '7',
  '-42',
  '123456789012345',
  '1234567890123456789',
  '5.0',
  '1.50',
  '0.1',
  '-0.5',
  '0.000001',
  '0.0000001',
  '1e3',
  '1E-2',
  '2.5e+10',
  '123456789.123456',
  '0.30000000000000004',
  '1.7976931348623157e308',
  '{"k":[1,"two",null]}',
  '[]',
  '["x","y,z","q\\"uote",null]',
  '[[1,2],[3,4]]',
  '{}',
  '"2020-01-02T03:04:05"',
];

function transcode(json: string, kinds: Kind[]): string {
  const columns = kinds.map((kind, i) => ({ id: `c${i}`, kind }));
  const reader = new JsonRecordReader(Buffer.from(json), columns);
  const out = new CopyWriter(64);
  const cols = columns.map((_, i) => i);
  while (reader.next()) reader.writeLine(out, cols);
  return out.take().toString('utf8');
}

test('every value of every kind gives the text copyValue gives', () => {
  for (const v of VALUES) {
    const record = `{${KINDS.map((_, i) => `"c${i}": ${v}`).join(', ')}}`;
    const expected = KINDS.map((k) => copyValue(JSON.parse(v), k)).join('\t') + '\n';
    // compared as the UTF-8 sent to the server (a lone surrogate is U+FFFD either way)
    assert.equal(transcode(`[${record}]`, KINDS), Buffer.from(expected).toString('utf8'), `value ${v}`);
  }
});

test('a float8 column takes decimals as written; exponents and -0 as JavaScript writes them', () => {
  const columns = [{ id: 'f', kind: 'number' as Kind, float8: true }];
  const reader = new JsonRecordReader(
    Buffer.from('[{"f": 1.50}, {"f": 0.02127659574468085}, {"f": 1e400}, {"f": -0.0}, {"f": 12}]'),
    columns,
  );
  const out = new CopyWriter(16);
  while (reader.next()) reader.writeLine(out, [0]);
  assert.equal(out.take().toString(), '1.50\n0.02127659574468085\nInfinity\n0\n12\n');
});

test('missing keys are NULL, repeated keys take the last value, keys in any order and escaped', () => {
  const json = String.raw`[{"c1": 2, "c0": "a"}, {"c0": "x", "c0": "y"}, {}, {"\u0063\u0031": 5}]`;
  assert.equal(transcode(json, ['text', 'number']), 'a\t2\ny\t\\N\n\\N\t\\N\n\\N\t5\n');
});

test('unknown keys are named, non-objects are told apart', () => {
  const columns = [{ id: 'a', kind: 'text' as Kind }];
  const reader = new JsonRecordReader(Buffer.from('[{"a": 1, "b": {"x": 1}, "c": null}, 5, "s", [1]]'), columns);
  assert.ok(reader.next());
  assert.deepEqual(reader.unknown, ['b', 'c']);
  for (let i = 0; i < 3; i++) {
    assert.ok(reader.next());
    assert.equal(reader.isObject, false);
  }
  assert.equal(reader.next(), false);
});

test('malformed JSON is a JSON error wherever it is', () => {
  const bad = [
    '[{"a": 1},]',
    '[{"a": 1},,{"a": 2}]',
    '[{"a": 1}',
    '[{"a": 1}] x',
    '[{"a": tru}]',
    '[{"a": 01}]',
    '[{"a": 1.}]',
    '[{"a": -}]',
    '[{"a": "x\u0001"}]',
    String.raw`[{"a": "\x"}]`,
    String.raw`[{"a": "\u12"}]`,
    '[{"a" 1}]',
    '[{"a": 1,}]',
    '[{a: 1}]',
    '[{"a": [1, 2}]',
    '[{"a": {"b": }}]',
    '[{"a": "unterminated}]',
    '[nul]',
    '',
  ];
  for (const json of bad) {
    assert.throws(
      () => transcode(json, ['text']),
      (e: any) => /JSON Error/.test(e.message),
      json,
    );
    assert.throws(() => JSON.parse(json), SyntaxError, json);
  }
});
