/**
 * Every file packbot reads is recognised by its `format` field. Adding a file type is one line in
 * FORMATS; `packbot validate` and the JSON Schema generator pick it up from here.
 */
import type { z } from 'zod';
import { SNAPSHOT_FORMAT, SNAPSHOT_FORMAT_V1, SnapshotFile } from '../api/snapshot-schema.js';
import { WORLD_FORMAT, WorldFile } from '../market/world-schema.js';
import { STRATEGY_FORMAT, StrategyFile } from '../strategy/strategy-schema.js';
import { BACKTEST_PART_FORMAT, BacktestPartFile } from './backtest-part.js';
import { BOT_CONFIG_FORMAT, BotConfigFile } from './bot-config.js';
import { InputFileError, type ParsedSource, readSource, validateSource } from './load.js';
import { SPACE_FORMAT, SpaceFile } from './space-file.js';

export interface FileFormat {
  /** Short name, also the JSON Schema's file name: `schemas/<kind>.schema.json`. */
  kind: string;
  schema: z.ZodType;
}

export const FORMATS: Readonly<Record<string, FileFormat>> = {
  [STRATEGY_FORMAT]: { kind: 'strategy', schema: StrategyFile },
  [SNAPSHOT_FORMAT]: { kind: 'snapshot', schema: SnapshotFile },
  [SNAPSHOT_FORMAT_V1]: { kind: 'snapshot', schema: SnapshotFile },
  [BOT_CONFIG_FORMAT]: { kind: 'bot-config', schema: BotConfigFile },
  [WORLD_FORMAT]: { kind: 'world', schema: WorldFile },
  [SPACE_FORMAT]: { kind: 'space', schema: SpaceFile },
  [BACKTEST_PART_FORMAT]: { kind: 'backtest-part', schema: BacktestPartFile },
};

export interface ValidatedFile {
  file: string;
  format: string;
  kind: string;
  data: unknown;
}

/** Finds the file's format from its `format` field; an InputFileError naming the file otherwise. */
function recognise(src: ParsedSource): { format: string; def: FileFormat } {
  const known = Object.keys(FORMATS).join(', ');
  const fail = (message: string, path: PropertyKey[]): never => {
    const pos = src.locate(path);
    throw new InputFileError([
      { file: src.file, line: pos?.line ?? 1, column: pos?.column ?? 1, path: path.join('.'), message },
    ]);
  };
  const data = src.data;
  if (data === null || typeof data !== 'object' || Array.isArray(data))
    return fail(`expected a mapping with a 'format' field (one of: ${known})`, []);
  const format = (data as Record<string, unknown>).format;
  if (format === undefined) return fail(`missing 'format' field; expected one of: ${known}`, ['format']);
  if (typeof format !== 'string') return fail(`must be a string, one of: ${known}`, ['format']);
  const def = FORMATS[format];
  if (!def) return fail(`unknown format '${format}'; expected one of: ${known}`, ['format']);
  return { format, def };
}

/** Reads, recognises and validates one file. Throws InputFileError with every issue found. */
export function validateFile(file: string): ValidatedFile {
  const src = readSource(file);
  const { format, def } = recognise(src);
  return { file, format, kind: def.kind, data: validateSource(src, def.schema) };
}
