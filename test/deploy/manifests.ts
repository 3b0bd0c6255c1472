/** Reading Kubernetes manifests in the deploy tests, and kubectl when it is installed (optional). */
import { expect } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { findProgram } from './programs.js';

// biome-ignore lint/suspicious/noExplicitAny: manifests are free-form YAML, checked field by field
export type Doc = any;

/** Every document of a YAML text, each parsed without error (`what` names it in a failure). */
export const loadDocs = (text: string, what: string): Doc[] =>
  parseAllDocuments(text).map((d) => {
    expect(d.errors, what).toEqual([]);
    return d.toJS();
  });

/** kubectl on PATH, or undefined: the offline kubectl checks are skipped without it. */
export const KUBECTL = findProgram('kubectl');
