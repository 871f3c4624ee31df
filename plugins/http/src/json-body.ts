import type { IncomingMessage } from 'node:http';
import { InvalidInputError, PayloadTooLargeError, RunnerError, UnsupportedMediaTypeError } from '@runner/plugin-sdk';

/**
 * Reads and parses a request's JSON body. Returns undefined when the request has none. Refuses a
 * declared length over the limit before reading a byte, and stops reading a streamed body as soon
 * as it passes the limit; the caller then answers with `Connection: close` so the rest is never
 * read.
 */
export async function readJsonBody(req: IncomingMessage, limitBytes: number): Promise<unknown> {
  return (await readJsonBodyAndBytes(req, limitBytes)).value;
}

/**
 * `readJsonBody`, with the bytes as received (what a webhook's signature is computed over). With
 * `formField`, a form-encoded body is read too: the JSON is that field's value.
 */
export async function readJsonBodyAndBytes(
  req: IncomingMessage,
  limitBytes: number,
  formField?: string,
): Promise<{ value: unknown; bytes?: Buffer }> {
  if (!hasRequestBody(req)) return { value: undefined };
  const declared = req.headers['content-length'];

  const kind = bodyKind(req.headers['content-type'], formField);
  if (declared !== undefined && Number(declared) > limitBytes) throw tooLarge(limitBytes);

  const raw = await collect(req, limitBytes);
  if (raw.length === 0) return { value: undefined, bytes: raw };
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(raw);
  } catch {
    throw new InvalidInputError('request body is not valid UTF-8');
  }
  if (kind === 'form') return { value: parseJson(formValue(text, formField!)), bytes: raw };
  return { value: parseJson(text), bytes: raw };
}

/** The JSON text a form-encoded body holds in `field`. */
function formValue(text: string, field: string): string {
  const value = new URLSearchParams(text).get(field);
  if (value === null)
    throw new InvalidInputError(`a form-encoded body must hold the JSON in its field "${field}"; it has none`, {
      field,
    });
  return value;
}

/** True when the request says a body follows (a length above 0, or chunked). */
export function hasRequestBody(req: IncomingMessage): boolean {
  const declared = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (declared !== undefined && Number(declared) > 0);
}

function bodyKind(header: string | undefined, formField: string | undefined): 'json' | 'form' {
  const [type = '', ...params] = (header ?? '').split(';').map((part) => part.trim().toLowerCase());
  const form = formField !== undefined && type === 'application/x-www-form-urlencoded';
  const json = type === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type);
  const charset = params
    .find((p) => p.startsWith('charset='))
    ?.slice('charset='.length)
    .replace(/"/g, '');
  if (!(json || form) || (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8')) {
    const wanted =
      formField === undefined ? 'application/json' : 'application/json or application/x-www-form-urlencoded';
    throw new UnsupportedMediaTypeError(
      `request body must be JSON (content-type ${wanted}, UTF-8); got ${header ? `"${header}"` : 'no content-type'}`,
    );
  }
  return form ? 'form' : 'json';
}

function tooLarge(limitBytes: number): PayloadTooLargeError {
  return new PayloadTooLargeError(`request body exceeds the limit of ${limitBytes} bytes`, {
    details: { limit_bytes: limitBytes },
  });
}

function collect(req: IncomingMessage, limitBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limitBytes) {
        cleanup();
        // Paused and never resumed: the rest stays on the wire until the socket closes.
        req.pause();
        reject(tooLarge(limitBytes));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(
        new RunnerError('body_read_failed', `reading the request body failed: ${error.message}`, {
          status: 400,
          cause: error,
        }),
      );
    };
    const onClose = () => {
      if (!req.complete) onError(new Error('the client closed the connection'));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/**
 * Deepest nesting of objects and arrays a request body may have. API bodies nest a few levels
 * (vars of a run); a deeper one is refused before parsing, so no parser, schema check or handler
 * recurses into it (a stack overflow there would be a 500).
 */
export const MAX_JSON_DEPTH = 64;

/** JSON.parse, with a failure that names line, column and offset of the first error. */
export function parseJson(text: string): unknown {
  checkJsonDepth(text);
  try {
    return JSON.parse(text);
  } catch (error) {
    const found = locateJsonError(text);
    if (!found) {
      throw new InvalidInputError(`malformed JSON: ${(error as Error).message}`, { cause: error });
    }
    const before = text.slice(0, found.position);
    const line = before.split('\n').length;
    const column = found.position - before.lastIndexOf('\n');
    throw new InvalidInputError(
      `malformed JSON at line ${line}, column ${column} (position ${found.position}): ${found.reason}`,
      {
        cause: error,
        details: { line, column, position: found.position },
      },
    );
  }
}

/** Refuses a text whose brackets nest deeper than MAX_JSON_DEPTH (one pass, strings skipped). */
function checkJsonDepth(text: string): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > MAX_JSON_DEPTH) {
        throw new InvalidInputError(`JSON nests deeper than ${MAX_JSON_DEPTH} levels (at position ${i})`, {
          details: { max_depth: MAX_JSON_DEPTH, position: i },
        });
      }
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
}

class JsonStop {
  constructor(
    readonly position: number,
    readonly reason: string,
  ) {}
}

/**
 * Finds the first syntax error of a text JSON.parse refused. V8 names the position for some
 * errors only ("Unexpected token '}', ... is not valid JSON" has none), so it is found here.
 * Returns undefined when nesting is too deep to scan, or when the text is valid after all.
 */
export function locateJsonError(text: string): { position: number; reason: string } | undefined {
  const n = text.length;
  let i = 0;
  const describe = (at: number) =>
    at >= n ? 'unexpected end of input' : `unexpected character ${JSON.stringify(text[at])}`;
  const fail = (reason: string, at = i): never => {
    throw new JsonStop(at, reason);
  };
  const skipSpace = () => {
    while (i < n && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  const literal = (word: string) => {
    for (let k = 0; k < word.length; k++) if (text[i + k] !== word[k]) fail(describe(i + k), i + k);
    i += word.length;
  };
  const string = () => {
    i++;
    for (;;) {
      if (i >= n) fail('unterminated string');
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return;
      }
      if (c === 0x5c) {
        const e = text[i + 1];
        if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else if (e === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) i += 6;
        else fail('invalid escape sequence in string');
      } else if (c < 0x20) {
        fail('control character in string (escape it)');
      } else {
        i++;
      }
    }
  };
  const numberPattern = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
  const number = () => {
    numberPattern.lastIndex = i;
    const match = numberPattern.exec(text);
    if (!match) fail(text[i] === '-' ? describe(i + 1) : describe(i), text[i] === '-' ? i + 1 : i);
    else i += match[0].length;
  };
  const value = (): void => {
    skipSpace();
    const c = text[i];
    if (c === '{') return object();
    if (c === '[') return array();
    if (c === '"') return string();
    if (c === 't') return literal('true');
    if (c === 'f') return literal('false');
    if (c === 'n') return literal('null');
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return number();
    fail(describe(i));
  };
  const object = () => {
    i++;
    skipSpace();
    if (text[i] === '}') {
      i++;
      return;
    }
    for (;;) {
      skipSpace();
      if (text[i] !== '"') fail(i >= n ? describe(i) : 'expected a property name in double quotes');
      string();
      skipSpace();
      if (text[i] !== ':') fail(i >= n ? describe(i) : "expected ':' after the property name");
      i++;
      value();
      skipSpace();
      if (text[i] === ',') i++;
      else if (text[i] === '}') return void i++;
      else fail(i >= n ? describe(i) : "expected ',' or '}' after a property value");
    }
  };
  const array = () => {
    i++;
    skipSpace();
    if (text[i] === ']') {
      i++;
      return;
    }
    for (;;) {
      value();
      skipSpace();
      if (text[i] === ',') i++;
      else if (text[i] === ']') return void i++;
      else fail(i >= n ? describe(i) : "expected ',' or ']' after an array element");
    }
  };

  try {
    value();
    skipSpace();
    if (i < n) fail('unexpected content after the JSON value');
    return undefined;
  } catch (stop) {
    if (stop instanceof JsonStop) return { position: stop.position, reason: stop.reason };
    if (stop instanceof RangeError) return undefined;
    throw stop;
  }
}
