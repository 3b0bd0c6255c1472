/**
 * The image's runtime tree, without a container engine: laid out as the Dockerfile's runtime
 * stage does (compiled dist/, bin/, config/, strategies/, schemas/, package.json and the
 * production dependencies only, copied, not linked), the compose config mounted as
 * config/bot.yaml, the data directory a separate, writable "volume", the app itself read-only.
 * Run from there as a non-root user on the embedded simulator, the bot must trade with its ledger
 * in the data directory, answer /healthz and exit 0 on SIGTERM.
 */
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, tempDir } from '../e2e/helpers.js';
import { built, startBot, stopBots } from '../e2e/process.js';

/** package-lock.json paths (`node_modules/a`, `node_modules/a/node_modules/b`) not only for dev. */
function productionPackages(): { path: string; optional: boolean }[] {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { dev?: boolean; devOptional?: boolean; optional?: boolean }>;
  };
  return Object.entries(lock.packages)
    .filter(([path, p]) => path !== '' && !p.dev && !p.devOptional)
    .map(([path, p]) => ({ path, optional: p.optional === true }));
}

/** uid and gid of `nobody`, for a test running as root. */
function nobody(): { uid: number; gid: number } | undefined {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('nobody:'));
  if (!line) return undefined;
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

/** Builds the tree; returns the app and data directories. */
function assemble(root: string): { app: string; data: string } {
  const app = join(root, 'app');
  const data = join(root, 'data');
  mkdirSync(app);
  mkdirSync(data);
  // COPY --from=build /app/node_modules (after `npm prune --omit=dev`): each production package,
  // without its nested node_modules (those are entries of their own when they are production).
  for (const { path, optional } of productionPackages()) {
    const from = join(ROOT, path);
    if (!existsSync(from)) {
      if (optional) continue;
      throw new Error(`production dependency ${path} is not installed`);
    }
    const nested = join(from, 'node_modules');
    cpSync(from, join(app, path), { recursive: true, filter: (src) => src !== nested });
  }
  // COPY --from=build /app/dist: the build stage compiles src/ and bench/ only.
  for (const d of ['src', 'bench']) cpSync(join(ROOT, 'dist', d), join(app, 'dist', d), { recursive: true });
  for (const d of ['bin', 'config', 'strategies', 'schemas'])
    cpSync(join(ROOT, d), join(app, d), { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(app, 'package.json'));
  // compose.yaml mounts deploy/packbot/bot.yaml over config/bot.yaml. Here the metrics server
  // stays on loopback and takes a free port (tests run side by side).
  writeFileSync(
    join(app, 'config/bot.yaml'),
    readFileSync(join(ROOT, 'deploy/packbot/bot.yaml'), 'utf8')
      .replace('host: 0.0.0.0', 'host: 127.0.0.1')
      .replace('port: 9464', 'port: 0'),
  );
  // VOLUME /app/data.
  symlinkSync(data, join(app, 'data'));
  return { app, data };
}

describe.skipIf(!built())('the container tree (Dockerfile runtime stage, no engine)', () => {
  it('runs read-only as a non-root user, trades into the data volume, exits 0 on SIGTERM', async () => {
    const root = tempDir('packbot-image-');
    chmodSync(root, 0o755);
    const { app, data } = assemble(root);
    try {
      expect(existsSync(join(app, 'node_modules/better-sqlite3'))).toBe(true);
      for (const dev of ['vitest', 'typescript', '@biomejs', 'nock'])
        expect(existsSync(join(app, 'node_modules', dev)), dev).toBe(false);
      execFileSync('chmod', ['-R', 'a-w', app]);

      let user: { uid: number; gid: number } | undefined;
      if (process.getuid?.() === 0) {
        user = nobody();
        if (user) chownSync(data, user.uid, user.gid);
        else console.warn('no user nobody in /etc/passwd: running the container tree as root');
      }
      const bot = startBot(
        ['run', '--config', 'config/bot.yaml'],
        { NODE_ENV: 'production', HOME: data },
        app,
        { bin: join(app, 'bin/packbot.js'), ...(user ?? {}) },
      );
      try {
        const listening = await bot.waitFor('metrics server listening');
        const confirmed = await bot.waitFor('order confirmed');
        expect(confirmed.quantity).toBeGreaterThan(0);
        const health = await fetch(`${String(listening.url)}/healthz`);
        expect(health.status).toBe(200);
        const metrics = await (await fetch(`${String(listening.url)}/metrics`)).text();
        expect(metrics).toMatch(/packbot_packs_opened_total\{[^}]+\} [1-9]/);
      } finally {
        bot.child.kill('SIGTERM');
      }
      const { code } = await bot.exit;
      expect(code, bot.stderr.join('')).toBe(0);
      // The ledger, its lock and the simulator's state live on the volume, and nothing else.
      expect(readdirSync(data)).toEqual(expect.arrayContaining(['packbot.db', 'packbot.sim-state']));
    } finally {
      await stopBots();
      execFileSync('chmod', ['-R', 'u+w', root]);
      rmSync(root, { recursive: true, force: true });
    }
  });
});
