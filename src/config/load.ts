/**
 * Loads a YAML or JSON file and validates it with a zod schema. Any problem becomes an
 * InputFileError naming `file:line:column`, the field's path and what is wrong; nothing is
 * returned unvalidated. The result is deep-frozen: configuration is validated once and never
 * mutated.
 *
 * Inputs are bounded: JSON (a `.json` file, or text that starts with `{` or `[`) is parsed with
 * JSON.parse and located by a linear scan only when a field fails (json-locate.ts), so a snapshot
 * of tens of megabytes validates in seconds; the YAML parser, whose positioned tree costs about a
 * hundred times the text, reads only YAML (and JSON that JSON.parse refuses, for the position of
 * the syntax error) up to MAX_YAML_BYTES. An alias bomb or any other YAML resource limit, and a
 * file over MAX_INPUT_BYTES, is an InputFileError naming the file (exit 2), never a crash.
 */

import { readFileSync, statSync } from 'node:fs';
import { isNode, LineCounter, parseDocument } from 'yaml';
import type { z } from 'zod';
import { UserInputError } from '../core/errors.js';
import { formatPath } from '../core/format-path.js';
import { deepFreeze } from '../core/freeze.js';
import { jsonDepth, jsonErrorOffset, locateJson, positionOf } from './json-locate.js';

/** The largest file read at all (a snapshot series' biggest file is a few tens of MB). */
const MAX_INPUT_BYTES = 256 * 1024 * 1024;
/** The largest text given to the YAML parser (configs, strategies and worlds are kilobytes). */
export const MAX_YAML_BYTES = 16 * 1024 * 1024;
/** Aliases expanded when a YAML document becomes data: more is an alias bomb. */
const MAX_YAML_ALIASES = 100;
/** Nesting of objects and arrays (packbot's files are under ten deep; the code that walks them recurses). */
const MAX_NESTING = 100;

/** The deepest nesting of parsed YAML data, walked without recursion, stopping past MAX_NESTING. */
function dataDepth(data: unknown): number {
  let max = 0;
  const stack: [unknown, number][] = [[data, 0]];
  while (stack.length > 0 && max <= MAX_NESTING) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    max = Math.max(max, d + 1);
    for (const child of Object.values(v)) stack.push([child, d + 1]);
  }
  return max;
}

const fileIssue = (file: string, message: string, line?: number, column?: number): InputFileError =>
  new InputFileError([{ file, line, column, path: '', message }]);

const tooDeep = (file: string) =>
  fileIssue(file, `nested more than ${MAX_NESTING} levels deep (a resource limit: no packbot file needs it)`);

export interface InputIssue {
  file: string;
  line: number | undefined;
  column: number | undefined;
  path: string;
  message: string;
}

export class InputFileError extends UserInputError {
  constructor(readonly issues: InputIssue[]) {
    super(issues.map(formatIssue).join('\n'));
    this.name = 'InputFileError';
  }
}

function formatIssue(i: InputIssue): string {
  const where = i.line !== undefined ? `${i.file}:${i.line}:${i.column ?? 1}` : i.file;
  return `${where}: ${i.path ? `${i.path}: ` : ''}${i.message}`;
}

export interface ParsedSource {
  file: string;
  data: unknown;
  /** Position of the node at `path` (or its nearest existing ancestor). */
  locate(path: readonly PropertyKey[]): { line: number; column: number } | undefined;
}

/** A `.json` file, or text that opens like JSON (`{` or `[` first). */
function looksLikeJson(text: string, file: string): boolean {
  if (/\.json$/i.test(file)) return true;
  const first = /\S/.exec(text.slice(0, 4096))?.[0];
  return first === '{' || first === '[';
}

/** Where JSON.parse stopped, from its message (`at position N` or `line L column C`). */
function jsonErrorPosition(text: string, e: unknown): { line: number; column: number } | undefined {
  const message = e instanceof Error ? e.message : '';
  const lc = /line (\d+) column (\d+)/.exec(message);
  if (lc) return { line: Number(lc[1]), column: Number(lc[2]) };
  const at = /at position (\d+)/.exec(message);
  const offset = at ? Number(at[1]) : jsonErrorOffset(text);
  return offset === undefined ? undefined : positionOf(text, offset);
}

/**
 * Parses text as JSON or YAML; syntax errors are InputFileErrors with positions, resource limits
 * InputFileErrors naming the file.
 */
export function parseSource(text: string, file: string): ParsedSource {
  if (looksLikeJson(text, file)) {
    try {
      const data: unknown = JSON.parse(text);
      if (jsonDepth(text) > MAX_NESTING) throw tooDeep(file);
      return { file, data, locate: (path) => locateJson(text, path) };
    } catch (e) {
      if (e instanceof InputFileError) throw e;
      // Too big for the YAML parser: JSON.parse's own position is enough.
      if (text.length > MAX_YAML_BYTES) {
        const pos = jsonErrorPosition(text, e);
        throw fileIssue(
          file,
          `not valid JSON (${e instanceof Error ? e.message : String(e)})`,
          pos?.line,
          pos?.column,
        );
      }
      // Otherwise the YAML parser names the line and column of the syntax error.
    }
  }
  if (text.length > MAX_YAML_BYTES)
    throw fileIssue(
      file,
      `too large for YAML (${(text.length / 1024 / 1024).toFixed(1)} MB; at most ${MAX_YAML_BYTES / 1024 / 1024} MB): write large files as JSON`,
    );
  try {
    return parseYaml(text, file);
  } catch (e) {
    if (e instanceof InputFileError) throw e;
    // The yaml library's resource guards (alias expansion) and a nesting too deep for the stack.
    if (e instanceof ReferenceError || e instanceof RangeError)
      throw fileIssue(
        file,
        `YAML resource limit: ${e.message.split('\n')[0]} (at most ${MAX_YAML_ALIASES} aliases)`,
      );
    throw e;
  }
}

function parseYaml(text: string, file: string): ParsedSource {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    throw new InputFileError(
      doc.errors.map((e) => {
        const pos = lineCounter.linePos(e.pos[0]);
        return {
          file,
          line: pos.line,
          column: pos.col,
          path: '',
          message: e.message.split('\n')[0] ?? e.message,
        };
      }),
    );
  }
  const data = doc.toJS({ maxAliasCount: MAX_YAML_ALIASES });
  if (dataDepth(data) > MAX_NESTING) throw tooDeep(file);
  const locate = (path: readonly PropertyKey[]) => {
    for (let n = path.length; n >= 0; n--) {
      const node = doc.getIn(path.slice(0, n) as unknown[], true);
      if (isNode(node) && node.range) {
        const pos = lineCounter.linePos(node.range[0]);
        return { line: pos.line, column: pos.col };
      }
    }
    return undefined;
  };
  return { file, data, locate };
}

export function readSource(file: string): ParsedSource {
  let text: string;
  try {
    const size = statSync(file).size;
    if (size > MAX_INPUT_BYTES)
      throw fileIssue(
        file,
        `too large (${(size / 1024 / 1024).toFixed(0)} MB; packbot reads files of at most ${MAX_INPUT_BYTES / 1024 / 1024} MB)`,
      );
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if (e instanceof InputFileError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT' ? 'file not found' : code === 'EISDIR' ? 'is a directory' : `cannot read (${code})`;
    throw new InputFileError([{ file, line: undefined, column: undefined, path: '', message: why }]);
  }
  return parseSource(text, file);
}

/** Validates parsed data; zod issues become positioned InputIssues. */
export function validateSource<S extends z.ZodType>(src: ParsedSource, schema: S): z.output<S> {
  const result = schema.safeParse(src.data);
  if (result.success) return deepFreeze(result.data);
  throw new InputFileError(
    result.error.issues.map((issue) => {
      const pos = src.locate(issue.path);
      return {
        file: src.file,
        line: pos?.line,
        column: pos?.column,
        path: formatPath(issue.path),
        message: issue.message,
      };
    }),
  );
}

export function loadFile<S extends z.ZodType>(file: string, schema: S): z.output<S> {
  return validateSource(readSource(file), schema);
}
