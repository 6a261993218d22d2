// Password reset by e-mail, against a real SMTP server in the test (smtp-server).
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { startApp, type TestApp } from './helpers/app.ts';
import { WebClient } from './helpers/web-client.ts';

const mails: string[] = [];
let smtp: SMTPServer;
let t: TestApp;
before(async () => {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, _session, done) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        mails.push(Buffer.concat(chunks).toString('utf8'));
        done();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  const port = (smtp.server.address() as AddressInfo).port;
  t = await startApp({ plugins: [], config: { 'smtp.server': `127.0.0.1:${port}`, 'smtp.mail_from': 'portal@example.org' } });
  await t.user('rosa');
});
after(async () => {
  await t?.close();
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
});

function linkIn(mail: string): string {
  const unfolded = mail.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
  const m = /http:\/\/test\.local(\/user\/reset\/[^\s]+)/.exec(unfolded);
  assert.ok(m, `a reset link in the mail:\n${mail}`);
  return m[1];
}

test('a reset link is mailed, sets a new password once, and ends the old sessions', async () => {
  const old = new WebClient(t.app);
  await old.login('rosa');
  const web = new WebClient(t.app);
  const asked = await web.post('/user/reset', { login: 'rosa@example.org' });
  assert.equal(asked.statusCode, 303);
  assert.equal(mails.length, 1);
  assert.match(mails[0], /To: rosa@example\.org/);
  const link = linkIn(mails[0]);
  const form = await web.get(link);
  assert.equal(form.statusCode, 200);
  const short = await web.post(
    link.split('?')[0],
    { key: new URL(`http://x${link}`).searchParams.get('key')!, password1: 'short', password2: 'short' },
    { from: link },
  );
  assert.equal(short.statusCode, 400);
  assert.match(short.body, /8 characters/);
  const done = await web.post(
    link.split('?')[0],
    { key: new URL(`http://x${link}`).searchParams.get('key')!, password1: 'a brand new secret', password2: 'a brand new secret' },
    { from: link },
  );
  assert.equal(done.statusCode, 303);
  assert.equal((await old.get('/dashboard')).statusCode, 303, 'the old session ended');
  await new WebClient(t.app).login('rosa', 'a brand new secret');
  assert.equal((await web.get(link)).statusCode, 400, 'the link works once');
});

test('an unknown account gets the same answer and no mail; a wrong key is refused', async () => {
  const before = mails.length;
  const web = new WebClient(t.app);
  const res = await web.post('/user/reset', { login: 'nobody@example.org' });
  assert.equal(res.statusCode, 303);
  assert.equal(mails.length, before);
  const rosa = await t.ok('user_show', { id: 'rosa' }, { token: t.sysadminToken });
  assert.equal((await web.get(`/user/reset/${rosa.id}?key=wrong`)).statusCode, 400);
  const forged = await web.post(
    `/user/reset/${rosa.id}`,
    { key: 'wrong', password1: 'a brand new secret', password2: 'a brand new secret' },
    { from: '/user/reset' },
  );
  assert.equal(forged.statusCode, 400);
});

test('without an SMTP server the page says reset by e-mail is not available', async () => {
  const plain = await startApp({ plugins: [] });
  try {
    const res = await new WebClient(plain.app).get('/user/reset');
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /not available on this site/);
    assert.doesNotMatch(res.body, /name="login"/);
  } finally {
    await plain.close();
  }
});
