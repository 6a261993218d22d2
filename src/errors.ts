// One error class per CKAN `__type`. Thrown anywhere; only the http layer turns them into the envelope.

export type FieldErrors = Record<string, unknown>;

export abstract class ActionError extends Error {
  abstract readonly type: string;
  abstract readonly status: number;
  /** The `error` object of the envelope. */
  toJSON(): Record<string, unknown> {
    return { __type: this.type, message: this.message };
  }
}

export class ValidationError extends ActionError {
  readonly type = 'Validation Error';
  readonly status = 409;
  constructor(
    readonly errors: FieldErrors,
    message?: string,
  ) {
    super(message ?? summarize(errors));
  }
  toJSON() {
    return { ...this.errors, __type: this.type, message: this.message };
  }
}

export class NotFoundError extends ActionError {
  readonly type = 'Not Found Error';
  readonly status = 404;
  constructor(reason?: string) {
    super(reason ? `Not found: ${reason}` : 'Not found');
  }
}

export class AuthorizationError extends ActionError {
  readonly type = 'Authorization Error';
  readonly status = 403;
  constructor(reason?: string) {
    super(reason ? `Access denied: ${reason}` : 'Access denied');
  }
}

export class SearchQueryError extends ActionError {
  readonly type = 'Search Query Error';
  readonly status = 400;
  constructor(reason: string) {
    super(`Search Query is invalid: ${reason}`);
  }
}

/** A malformed request (not JSON, not an object, unknown action, GET on a POST-only action). */
export class BadRequestError extends ActionError {
  readonly type = 'Bad Request';
  readonly status: number;
  constructor(message: string, status = 400) {
    super(message);
    this.status = status;
  }
}

export class InternalError extends ActionError {
  readonly type = 'Internal Server Error';
  readonly status = 500;
  constructor() {
    super('Internal Server Error');
  }
}

/** "name: Missing value; url: Must be a URL" — a readable one-line message for a field error dict. */
export function summarize(errors: FieldErrors): string {
  const parts: string[] = [];
  const walk = (prefix: string, v: unknown) => {
    if (Array.isArray(v)) {
      if (v.every((x) => typeof x === 'string')) {
        if (v.length) parts.push(`${prefix}: ${v.join(', ')}`);
      } else v.forEach((x, i) => walk(`${prefix}[${i}]`, x));
    } else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) walk(prefix ? `${prefix}.${k}` : k, x);
    } else if (typeof v === 'string') parts.push(prefix ? `${prefix}: ${v}` : v);
  };
  walk('', errors);
  return parts.length ? `Validation Error: ${parts.join('; ')}` : 'Validation Error';
}
