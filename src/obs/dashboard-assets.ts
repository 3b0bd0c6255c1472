/**
 * The dashboard's files (src/obs/dashboard, copied beside the compiled module by the build), read
 * once and kept. They carry no data, so they are open: the page then asks for the token.
 */
import { readFile } from 'node:fs/promises';

const cache = new Map<string, string>();

/** Only what the page itself loads: scripts from this origin, images from anywhere (pull images). */
const CSP = "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: http: https:";

/** The file's answer: 200 with the media type and headers a browser page needs. */
export async function dashboardAsset(file: string, type: string) {
  let body = cache.get(file);
  if (!body) {
    body = await readFile(new URL(`./dashboard/${file}`, import.meta.url), 'utf8');
    cache.set(file, body);
  }
  return {
    status: 200 as const,
    body,
    type,
    headers: { 'Cache-Control': 'no-cache', 'Content-Security-Policy': CSP },
  };
}
