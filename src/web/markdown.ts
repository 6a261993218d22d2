// Markdown of notes and descriptions as HTML: raw HTML in the source is not passed through, and the
// result is sanitized again (no scripts, event handlers, styles or javascript: links).
import MarkdownIt from 'markdown-it';
import sanitizeHtml from 'sanitize-html';

const md = new MarkdownIt({ html: false, linkify: true, breaks: false });

const SANITIZE: sanitizeHtml.IOptions = {
  allowedTags: sanitizeHtml.defaults.allowedTags.concat(['img', 'del', 's']),
  allowedAttributes: { a: ['href', 'title'], img: ['src', 'alt', 'title'], th: ['align'], td: ['align'], ol: ['start'] },
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
  const plain = sanitizeHtml(md.render(String(text)), { allowedTags: [], allowedAttributes: {} })
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/\s+/g, ' ')
    .trim();
  return plain.length > max ? `${plain.slice(0, max - 1).trimEnd()}…` : plain;
}
