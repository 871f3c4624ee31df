import { createReadStream, type Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, resolve, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createBrotliCompress, createGzip, constants as zlib } from 'node:zlib';
import type { StaticMount } from '@runner/plugin-sdk';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.wasm': 'application/wasm',
};
/** Worth compressing; images and fonts are compressed already. */
const COMPRESSIBLE = new Set([
  '.html',
  '.js',
  '.mjs',
  '.css',
  '.json',
  '.map',
  '.svg',
  '.txt',
  '.webmanifest',
  '.wasm',
]);
const MIN_COMPRESS_BYTES = 1024;
const YEAR_SECONDS = 365 * 24 * 3600;

/** A file found for a request, with how to send it. */
export interface StaticHit {
  file: string;
  stats: Stats;
  immutable: boolean;
}

/**
 * Serves one mount's built files: content types, ETags and 304s, a year of caching for
 * content-hashed files and revalidation for the rest, precompressed `.br`/`.gz` siblings when the
 * build made them and compression on the fly otherwise, and the single-page-app fallback.
 */
export class StaticFiles {
  private readonly root: string;

  constructor(readonly mount: StaticMount) {
    this.root = resolve(mount.dir);
  }

  /** True when this mount covers the path. */
  covers(path: string): boolean {
    const prefix = this.mount.prefix === '/' ? '/' : this.mount.prefix.replace(/\/$/, '') + '/';
    return path === this.mount.prefix || path.startsWith(prefix);
  }

  /** The file for a request path, the SPA fallback when none matches, or undefined. */
  async find(path: string): Promise<StaticHit | undefined> {
    const relative = decodePath(path.slice(this.mount.prefix.length).replace(/^\/+/, ''));
    if (relative === undefined || !this.inside(resolve(this.root, relative))) return undefined;
    const immutable = this.mount.immutablePrefix !== undefined && path.startsWith(this.mount.immutablePrefix);
    for (const candidate of [relative, join(relative, 'index.html')]) {
      const hit = await this.fileAt(candidate);
      if (hit) return { file: hit.file, stats: hit.stats, immutable };
    }
    // A missing hashed asset is a 404, not the app's page: a stale tab must see that its build is gone.
    if (immutable || this.mount.spaFallback === undefined || extname(relative) !== '') return undefined;
    const fallback = await this.fileAt(this.mount.spaFallback);
    return fallback ? { ...fallback, immutable: false } : undefined;
  }

  /** Writes the file (or 304) with its headers. */
  async send(req: IncomingMessage, res: ServerResponse, hit: StaticHit): Promise<void> {
    const extension = extname(hit.file).toLowerCase();
    const etag = `"${hit.stats.size.toString(36)}-${Math.floor(hit.stats.mtimeMs).toString(36)}"`;
    res.setHeader('content-type', CONTENT_TYPES[extension] ?? 'application/octet-stream');
    res.setHeader('cache-control', hit.immutable ? `public, max-age=${YEAR_SECONDS}, immutable` : 'no-cache');
    res.setHeader('etag', etag);
    res.setHeader('vary', 'Accept-Encoding');
    if (req.headers['if-none-match'] === etag) {
      res.writeHead(304);
      res.end();
      return;
    }
    const compressible = COMPRESSIBLE.has(extension) && hit.stats.size >= MIN_COMPRESS_BYTES;
    const encoding = compressible ? preferredEncoding(req.headers['accept-encoding']) : undefined;
    if (encoding) {
      const sibling = await this.fileAt(`${hit.file.slice(this.root.length + 1)}.${encoding === 'br' ? 'br' : 'gz'}`);
      res.setHeader('content-encoding', encoding);
      if (sibling) {
        res.setHeader('content-length', sibling.stats.size);
        return this.stream(req, res, sibling.file);
      }
      res.writeHead(200);
      if (req.method === 'HEAD') return void res.end();
      const compressor =
        encoding === 'br'
          ? createBrotliCompress({ params: { [zlib.BROTLI_PARAM_QUALITY]: 5 } })
          : createGzip({ level: 6 });
      await pipeline(createReadStream(hit.file), compressor, res).catch(() => res.destroy());
      return;
    }
    res.setHeader('content-length', hit.stats.size);
    return this.stream(req, res, hit.file);
  }

  private async stream(req: IncomingMessage, res: ServerResponse, file: string): Promise<void> {
    res.writeHead(200);
    if (req.method === 'HEAD') return void res.end();
    await pipeline(createReadStream(file), res).catch(() => res.destroy());
  }

  /** `..` and absolute paths could leave the directory; nothing outside it is ever served. */
  private inside(file: string): boolean {
    return file === this.root || file.startsWith(this.root + sep);
  }

  private async fileAt(relative: string): Promise<{ file: string; stats: Stats } | undefined> {
    const file = resolve(this.root, relative);
    if (!this.inside(file)) return undefined;
    try {
      const stats = await stat(file);
      return stats.isFile() ? { file, stats } : undefined;
    } catch {
      return undefined;
    }
  }
}

/** The decoded path below the mount, or undefined when it cannot be a file name. */
function decodePath(raw: string): string | undefined {
  try {
    const decoded = decodeURIComponent(raw);
    return decoded.includes('\0') ? undefined : decoded;
  } catch {
    return undefined;
  }
}

function preferredEncoding(header: string | string[] | undefined): 'br' | 'gzip' | undefined {
  const accepted = String(header ?? '')
    .split(',')
    .map((part) => part.trim().split(';')[0]?.toLowerCase());
  if (accepted.includes('br')) return 'br';
  if (accepted.includes('gzip')) return 'gzip';
  return undefined;
}
