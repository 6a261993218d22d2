// A browser-like client over app.inject for page tests: keeps cookies, sends forms with the page's
// CSRF token, follows nothing on its own (tests look at redirects).
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';

export class WebClient {
  readonly cookies = new Map<string, string>();
  constructor(private readonly app: FastifyInstance) {}

  private cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  private keep(res: LightMyRequestResponse): LightMyRequestResponse {
    for (const c of res.cookies as { name: string; value: string; maxAge?: number; expires?: Date }[]) {
      const gone = c.value === '' || c.maxAge === 0 || (c.expires && c.expires.getTime() < Date.now());
      if (gone) this.cookies.delete(c.name);
      else this.cookies.set(c.name, c.value);
    }
    return res;
  }

  async get(url: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
    return this.keep(await this.app.inject({ method: 'GET', url, headers: { cookie: this.cookieHeader(), ...headers } }));
  }

  /** The CSRF token of the forms on a page. */
  async csrfToken(page = '/'): Promise<string> {
    const res = await this.get(page);
    const m = /name="_csrf_token" value="([^"]+)"/.exec(res.body);
    if (!m) throw new Error(`no CSRF token on ${page} (status ${res.statusCode})`);
    return m[1];
  }

  /** Posts a form (urlencoded); the CSRF token is taken from `from` (default: the same URL) unless given. */
  async post(url: string, fields: Record<string, string | string[]>, opts: { from?: string; csrf?: string | null } = {}) {
    const body = new URLSearchParams();
    const token = opts.csrf === undefined ? await this.csrfToken(opts.from ?? url) : opts.csrf;
    if (token !== null) body.append('_csrf_token', token);
    for (const [k, v] of Object.entries(fields)) for (const x of Array.isArray(v) ? v : [v]) body.append(k, x);
    return this.keep(
      await this.app.inject({
        method: 'POST',
        url,
        headers: { cookie: this.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' },
        payload: body.toString(),
      }),
    );
  }

  /** Posts multipart form data with files (`files`: field -> {filename, content}). */
  async postMultipart(
    url: string,
    fields: Record<string, string>,
    files: Record<string, { filename: string; content: Buffer | string; type?: string }>,
    opts: { from?: string } = {},
  ) {
    const token = await this.csrfToken(opts.from ?? url);
    const boundary = `----svc${Date.now()}`;
    const parts: Buffer[] = [];
    const add = (head: string, content: Buffer | string) => {
      parts.push(
        Buffer.from(`--${boundary}\r\n${head}\r\n\r\n`),
        Buffer.isBuffer(content) ? content : Buffer.from(content),
        Buffer.from('\r\n'),
      );
    };
    add('Content-Disposition: form-data; name="_csrf_token"', token);
    for (const [k, v] of Object.entries(fields)) add(`Content-Disposition: form-data; name="${k}"`, v);
    for (const [k, f] of Object.entries(files))
      add(
        `Content-Disposition: form-data; name="${k}"; filename="${f.filename}"\r\nContent-Type: ${f.type ?? 'application/octet-stream'}`,
        f.content,
      );
    parts.push(Buffer.from(`--${boundary}--\r\n`));
    return this.keep(
      await this.app.inject({
        method: 'POST',
        url,
        headers: { cookie: this.cookieHeader(), 'content-type': `multipart/form-data; boundary=${boundary}` },
        payload: Buffer.concat(parts),
      }),
    );
  }

  async login(login: string, password = 'correct horse battery'): Promise<LightMyRequestResponse> {
    const res = await this.post('/user/login', { login, password });
    if (res.statusCode !== 303) throw new Error(`login as ${login} failed: ${res.statusCode}`);
    return res;
  }
}
