import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ServerResponse } from 'node:http';

/** Scripts and styles only from this origin, never inline; images from it or data URLs; no framing, no forms. */
export const STRICT_PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * A browser page's committed files (name → content type), read once from `dir` at start and served with a strict
 * CSP and no sniffing, framing or referrer: nothing comes from a CDN, nothing runs inline.
 */
export class StaticPage {
  private readonly files = new Map<string, Buffer>();

  constructor(
    dir: string,
    private readonly types: Readonly<Record<string, string>>,
  ) {
    for (const name of Object.keys(types)) this.files.set(name, readFileSync(join(dir, name)));
  }

  has(name: string): boolean {
    return this.files.has(name);
  }

  send(res: ServerResponse, name: string): void {
    res.setHeader('Content-Type', this.types[name] as string);
    res.setHeader('Content-Security-Policy', STRICT_PAGE_CSP);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('Cache-Control', 'no-cache');
    res.end(this.files.get(name));
  }
}
