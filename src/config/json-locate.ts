/**
 * Positions in JSON text without a tree of positioned nodes: a file parsed with JSON.parse is
 * scanned again only to name the line and column of a field that failed validation, walking past
 * every sibling that is not on the path. Linear in the text, constant memory, so a snapshot of
 * tens of megabytes is located as cheaply as it is parsed (the YAML parser's positioned tree took
 * a hundred times the file's size).
 */

export interface TextPosition {
  line: number;
  column: number;
}

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

function skipSpace(text: string, i: number): number {
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  return i;
}

/** The index just past the string starting at `i` (a `"`). */
function skipString(text: string, i: number): number {
  for (let j = i + 1; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === 0x5c) j++;
    else if (c === 0x22) return j + 1;
  }
  return text.length;
}

/** The index just past the value starting at `i`. */
function skipValue(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === 0x22) return skipString(text, i);
  if (c !== 0x7b && c !== 0x5b) {
    let j = i;
    while (j < text.length && !/[\s,\]}]/.test(text[j]!)) j++;
    return j;
  }
  let depth = 0;
  for (let j = i; j < text.length; j++) {
    const d = text.charCodeAt(j);
    if (d === 0x22) j = skipString(text, j) - 1;
    else if (d === 0x7b || d === 0x5b) depth++;
    else if (d === 0x7d || d === 0x5d) {
      depth--;
      if (depth === 0) return j + 1;
    }
  }
  return text.length;
}

/** The offset of the value at `key` (object) or index `key` (array) inside the value at `i`. */
function child(text: string, i: number, key: PropertyKey): number | undefined {
  const open = text.charCodeAt(i);
  let j = skipSpace(text, i + 1);
  if (open === 0x7b) {
    while (j < text.length && text.charCodeAt(j) === 0x22) {
      const end = skipString(text, j);
      const rawKey = text.slice(j + 1, end - 1);
      const name = rawKey.includes('\\') ? (JSON.parse(text.slice(j, end)) as string) : rawKey;
      j = skipSpace(text, skipSpace(text, end) + 1); // past the colon
      if (name === String(key)) return j;
      j = skipSpace(text, skipValue(text, j));
      if (text.charCodeAt(j) !== 0x2c) return undefined;
      j = skipSpace(text, j + 1);
    }
    return undefined;
  }
  if (open === 0x5b && typeof key === 'number') {
    for (let n = 0; j < text.length && text.charCodeAt(j) !== 0x5d; n++) {
      if (n === key) return j;
      j = skipSpace(text, skipValue(text, j));
      if (text.charCodeAt(j) !== 0x2c) return undefined;
      j = skipSpace(text, j + 1);
    }
  }
  return undefined;
}

/** Line and column (1-based) of a character offset. */
export function positionOf(text: string, offset: number): TextPosition {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: offset - lineStart + 1 };
}

/**
 * The position of the value at `path` in valid JSON `text`, or of its nearest ancestor that
 * exists (a missing field is reported where its object is).
 */
export function locateJson(text: string, path: readonly PropertyKey[]): TextPosition | undefined {
  let at = skipSpace(text, 0);
  if (at >= text.length) return undefined;
  for (const key of path) {
    const next = child(text, at, key);
    if (next === undefined) break;
    at = next;
  }
  return positionOf(text, at);
}

/** The deepest nesting of objects and arrays in JSON `text`, counted without recursion. */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) i = skipString(text, i) - 1;
    else if (c === 0x7b || c === 0x5b) max = Math.max(max, ++depth);
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return max;
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/**
 * The offset of the first syntax error in `text` (JSON.parse does not always say where), found by
 * a scan with an explicit stack; undefined when the scan finds none (an error inside a string's
 * escapes, which it does not check).
 */
export function jsonErrorOffset(text: string): number | undefined {
  const stack: number[] = [];
  let mode: 'value' | 'key' | 'after' = 'value';
  let i = skipSpace(text, 0);
  while (true) {
    const c = text.charCodeAt(i);
    if (mode === 'value') {
      if (c === 0x7b || c === 0x5b) {
        stack.push(c);
        i = skipSpace(text, i + 1);
        const close = c === 0x7b ? 0x7d : 0x5d;
        if (text.charCodeAt(i) === close) {
          stack.pop();
          i = skipSpace(text, i + 1);
          mode = 'after';
        } else mode = c === 0x7b ? 'key' : 'value';
        continue;
      }
      if (c === 0x22) {
        const end = skipString(text, i);
        if (text.charCodeAt(end - 1) !== 0x22 || end - 1 === i) return i;
        i = end;
      } else {
        NUMBER.lastIndex = i;
        const word = /true|false|null/y;
        word.lastIndex = i;
        if (NUMBER.test(text)) i = NUMBER.lastIndex;
        else if (word.test(text)) i = word.lastIndex;
        else return i;
      }
      i = skipSpace(text, i);
      mode = 'after';
    } else if (mode === 'key') {
      if (c !== 0x22) return i;
      i = skipSpace(text, skipString(text, i));
      if (text.charCodeAt(i) !== 0x3a) return i;
      i = skipSpace(text, i + 1);
      mode = 'value';
    } else {
      const top = stack.at(-1);
      if (top === undefined) return i < text.length ? i : undefined;
      if (c === 0x2c) {
        i = skipSpace(text, i + 1);
        mode = top === 0x7b ? 'key' : 'value';
      } else if (c === (top === 0x7b ? 0x7d : 0x5d)) {
        stack.pop();
        i = skipSpace(text, i + 1);
      } else return i;
    }
  }
}
