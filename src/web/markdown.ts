// Markdown of notes and descriptions as HTML: raw HTML in the source is not passed through, and the
// result is sanitized again (no scripts, event handlers, styles or javascript: links).
import MarkdownIt from 'markdown-it';
import sanitizeHtml from 'sanitize-html';

const md = new MarkdownIt({ html: false, linkify: true, breaks: false });

const SANITIZE: sanitizeHtml.IOptions = {
  allowedTags: sanitizeHtml.defaults.allowedTags.concat(['img', 'del', 's']),
  allowedAttributes: { a: ['href', 'title', 'rel'], img: ['src', 'alt', 'title'], th: ['align'], td: ['align'], ol: ['start'] },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesAppliedToAttributes: ['href', 'src'],
  allowProtocolRelative: false,
  transformTags: { a: sanitizeHtml.simpleTransform('a', { rel: 'nofollow noopener' }) },
};

export function renderMarkdown(text: string | null | undefined): string {
  if (!text) return '';
  return sanitizeHtml(md.render(String(text)), SANITIZE);
}

/** Plain text of markdown, cut to `max` characters (for lists and descriptions in meta tags). */
export function markdownExcerpt(text: string | null | undefined, max = 180): string {
  if (!text) return '';
  // The text of the parsed tokens (no HTML rendered and sanitized: lists of results call this per
  // row); only the beginning of a long text is parsed.
  const parts: string[] = [];
  for (const token of md.parse(String(text).slice(0, Math.max(1000, max * 5)), {})) {
    if (token.type === 'inline') {
      for (const c of token.children ?? []) {
        if (c.type === 'text' || c.type === 'text_special' || c.type === 'code_inline') parts.push(c.content);
        else if (c.type === 'softbreak' || c.type === 'hardbreak') parts.push(' ');
      }
    } else if (token.type === 'code_block' || token.type === 'fence') parts.push(token.content);
    parts.push(' ');
  }
  const plain = parts.join('').replace(/\s+/g, ' ').trim();
  return plain.length > max ? `${plain.slice(0, max - 1).trimEnd()}…` : plain;
}
