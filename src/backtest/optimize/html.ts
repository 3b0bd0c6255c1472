import type { OptimizeResult } from './search.js';
export function renderOptimizeHtml(r: OptimizeResult): string {
  return `<!doctype html><title>${r.strategy}</title>`;
}
