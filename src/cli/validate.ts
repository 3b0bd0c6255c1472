/**
 * `packbot validate FILE…`: recognises each file by its `format` field and validates it with that
 * format's schema. A bot config is also resolved the way `packbot run` resolves it, so the files
 * it references (strategies, the embedded world) are checked too, each problem named with its own
 * file:line:column. Every file is checked and every problem reported (file:line:column: path:
 * message); any invalid file gives exit code 2.
 */
import { BOT_CONFIG_FORMAT, loadBotConfig } from '../config/bot-config.js';
import { FORMATS, validateFile } from '../config/formats.js';
import { InputFileError } from '../config/load.js';
import { loadWorld } from '../config/world-file.js';
import { UsageError } from '../core/errors.js';
import { WORLD_FORMAT } from '../market/world-schema.js';
import { parseFlags } from './args.js';
import type { Command } from './command.js';

export const command: Command = {
  summary: 'validate config, strategy, world and snapshot files',
  usage: `packbot validate FILE...   (formats: ${Object.keys(FORMATS).join(', ')})`,
  async run(argv) {
    const { positionals } = parseFlags(argv, {}, 'validate');
    if (positionals.length === 0)
      throw new UsageError('validate: give at least one file (packbot validate FILE...)');
    let bad = 0;
    for (const file of positionals) {
      try {
        const v = validateFile(file);
        // The environment (key variables) is the running bot's business, not the file's.
        if (v.format === BOT_CONFIG_FORMAT) loadBotConfig(file, process.env, { ignoreEnv: true });
        // A world that extends another: the chain resolves and the merged world is valid.
        if (v.format === WORLD_FORMAT) loadWorld(file);
        process.stdout.write(`${file}: ok (${v.kind}, ${v.format})\n`);
      } catch (e) {
        if (!(e instanceof InputFileError)) throw e;
        bad++;
        process.stderr.write(`${e.message}\n`);
      }
    }
    if (bad > 0) {
      process.stderr.write(`packbot: ${bad} of ${positionals.length} file(s) invalid\n`);
      return 2;
    }
    return 0;
  },
};
