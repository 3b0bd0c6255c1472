/**
 * Loads a YAML or JSON file (JSON is parsed as YAML 1.2, so both keep source positions) and
 * validates it with a zod schema. Any problem becomes an InputFileError naming
 * `file:line:column`, the field's path and what is wrong; nothing is returned unvalidated.
 * The result is deep-frozen: configuration is validated once and never mutated.
 */

import { readFileSync } from 'node:fs';
import { isNode, LineCounter, parseDocument } from 'yaml';
import type { z } from 'zod';
import { UserInputError } from '../core/errors.js';
import { formatPath } from '../core/format-path.js';
import { deepFreeze } from '../core/freeze.js';

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

export function formatIssue(i: InputIssue): string {
  const where = i.line !== undefined ? `${i.file}:${i.line}:${i.column ?? 1}` : i.file;
  return `${where}: ${i.path ? `${i.path}: ` : ''}${i.message}`;
}

export interface ParsedSource {
  file: string;
  data: unknown;
  /** Position of the node at `path` (or its nearest existing ancestor). */
  locate(path: readonly PropertyKey[]): { line: number; column: number } | undefined;
}

/** Parses text as YAML/JSON; syntax errors are InputFileErrors with positions. */
export function parseSource(text: string, file: string): ParsedSource {
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
  const data = doc.toJS({ maxAliasCount: 100 });
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
    text = readFileSync(file, 'utf8');
  } catch (e) {
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
