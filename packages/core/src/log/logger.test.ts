// The deferred logger (logger.ts): below its level nothing loads pino; the first record at an
// enabled level loads it and is written with the root's base fields and the child's bindings.
// Run in a child Node so that this file's process (which may have pino loaded) does not count.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createLogger, silentLogger } from './index.ts';

const LOGGER = pathToFileURL(path.join(path.dirname(fileURLToPath(import.meta.url)), 'index.ts')).href;

describe('createLogger (deferred pino)', () => {
  it('knows its level without pino, and children inherit it', () => {
    const log = createLogger('warn', 3, 'json');
    expect(log.level).toBe('warn');
    expect(log.isLevelEnabled('info')).toBe(false);
    expect(log.isLevelEnabled('warn')).toBe(true);
    expect(log.isLevelEnabled('fatal')).toBe(true);
    const child = log.child({ mod: 'device' });
    expect(child.level).toBe('warn');
    expect(child.isLevelEnabled('debug')).toBe(false);
    expect(silentLogger().isLevelEnabled('fatal')).toBe(false);
  });

  it('loads pino with the first record at an enabled level, and writes it with base fields and bindings', () => {
    const script = [
      "import { createRequire } from 'node:module';",
      `const { createLogger } = await import(${JSON.stringify(LOGGER)});`,
      'const pinoLoaded = () => Object.keys(createRequire(import.meta.url).cache).some((k) => k.includes("/pino/"));',
      "const log = createLogger('warn', 3, 'json').child({ mod: 'device' });",
      "log.info({ a: 1 }, 'dropped'); log.debug('dropped too');",
      "process.stdout.write(`before ${pinoLoaded()}\\n`);",
      "log.warn({ peer: 2 }, 'written');",
      "process.stdout.write(`after ${pinoLoaded()}\\n`);",
    ].join('\n');
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe('before false\nafter true\n');
    const records = r.stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ level: 40, rank: 3, pid: r.pid, mod: 'device', peer: 2, msg: 'written' });
  });
});
