/**
 * The one path rule of a bot config: a relative path is relative to the config file's directory
 * (never the working directory), an absolute one is taken as written, `:memory:` is no path, and
 * dry-run's paper ledger sits beside the resolved live one.
 */
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BotConfigFile, configPathOf, storePathOf } from '../../src/config/bot-config.js';

const file = (store?: string) =>
  BotConfigFile.parse({
    format: 'packbot.config/v1',
    api: { base_url: 'embedded' },
    accounts: [{ name: 'main', strategy: 's.yaml' }],
    ...(store === undefined ? {} : { store: { path: store } }),
  });

describe('configPathOf', () => {
  it.each([
    ['/etc/packbot/bot.yaml', 'data/packbot.db', '/etc/packbot/data/packbot.db'],
    ['/etc/packbot/bot.yaml', '../data/packbot.db', '/etc/data/packbot.db'],
    ['/etc/packbot/bot.yaml', './pause', '/etc/packbot/pause'],
    ['/etc/packbot/bot.yaml', '/var/lib/packbot/ledger.db', '/var/lib/packbot/ledger.db'],
  ])('in %s, %s is %s', (config, written, expected) => {
    expect(configPathOf(config, written)).toBe(expected);
  });

  it('a config path given relative (on the command line) is relative to the working directory', () => {
    expect(configPathOf('config/bot.yaml', '../data/packbot.db')).toBe(resolve('data/packbot.db'));
    expect(configPathOf('bot.yaml', 'data/x.db')).toBe(resolve('data/x.db'));
  });
});

describe('storePathOf', () => {
  it.each([
    ['data/packbot.db', 'live', '/srv/bot/data/packbot.db'],
    ['data/packbot.db', 'dry-run', '/srv/bot/data/packbot.dry-run.db'],
    ['../ledgers/main.db', 'dry-run', '/srv/ledgers/main.dry-run.db'],
    ['ledger', 'dry-run', '/srv/bot/ledger.dry-run'],
    ['/var/lib/packbot/main.db', 'live', '/var/lib/packbot/main.db'],
    ['/var/lib/packbot/main.db', 'dry-run', '/var/lib/packbot/main.dry-run.db'],
    [':memory:', 'live', ':memory:'],
    [':memory:', 'dry-run', ':memory:'],
  ] as const)('store.path %s, %s: %s', (path, mode, expected) => {
    expect(storePathOf(file(path), '/srv/bot/bot.yaml', mode)).toBe(expected);
  });

  it('the default store.path is data/packbot.db beside the config, live by default', () => {
    expect(storePathOf(file(), '/srv/bot/bot.yaml')).toBe('/srv/bot/data/packbot.db');
  });
});
