// The Content-Security-Policy of every response: no inline scripts or styles anywhere. Images,
// media and framed web pages may come from other sites (resource previews show them).
export const CONTENT_SECURITY_POLICY: Record<string, string[]> = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'", 'data:', 'https:', 'http:'],
  mediaSrc: ["'self'", 'https:', 'http:'],
  frameSrc: ["'self'", 'https:', 'http:'],
  connectSrc: ["'self'"],
  fontSrc: ["'self'"],
  objectSrc: ["'none'"],
  baseUri: ["'self'"],
  formAction: ["'self'"],
  frameAncestors: ["'self'"],
};
