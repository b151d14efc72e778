// STYLE.md rule 2: core/src is split by layer and a folder imports only the
// folders listed for it, each through its index.ts. This test reads every
// import in src/ and fails on any edge the table does not allow.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src');

/** folder -> folders it may import (values). `import type` of config/ and log/ is allowed everywhere. */
const ALLOWED: Record<string, string[]> = {
  // api also reaches the wire-up client (pmi) at init and the transport's types.
  api: ['runtime', 'comm', 'coll', 'datatype', 'device', 'config', 'log', 'util', 'pmi', 'transport', 'io'],
  // What a thread owns between init and finalize (its state, how it waits, the roll-call, worker boot):
  // below api/, above everything api/ reaches.
  runtime: ['comm', 'coll', 'datatype', 'device', 'config', 'log', 'util', 'pmi', 'pmi-direct', 'transport'],
  comm: ['coll', 'datatype', 'device', 'shm', 'util'],
  coll: ['device', 'datatype', 'util'],
  datatype: ['util'],
  // The pure parts of MPI-IO (views, two-phase plans, amodes, fs errors): the File class is in api/.
  io: ['datatype', 'util'],
  device: ['transport', 'shm', 'util'],
  shm: ['util'],
  transport: ['shm', 'util'],
  config: ['util'],
  log: ['util'],
  util: [],
  // pmi/index.ts re-exports the settings table and job environment names: the
  // launcher may import only @tsmpi/core/pmi (STYLE rule 3).
  pmi: ['util', 'config'],
  // Direct launch by a foreign PMI launcher: another wire-up client (pmi's PmiClient) for runtime/.
  'pmi-direct': ['util', 'config', 'pmi'],
};

/**
 * Thread entry points create their own root logger (a logger cannot cross a
 * thread): the one value import of log/ outside api/.
 */
const ENTRY_POINTS: Record<string, string[]> = { 'device/engine-worker.ts': ['log'] };

interface Edge { file: string; spec: string; typeOnly: boolean }

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = path.join(dir, d.name);
    if (d.isDirectory()) return sourceFiles(p);
    return d.name.endsWith('.ts') && !d.name.endsWith('.test.ts') && !d.name.endsWith('.test-util.ts') ? [p] : [];
  });
}

function importsOf(file: string): Edge[] {
  const text = fs.readFileSync(file, 'utf8');
  const out: Edge[] = [];
  const re = /^\s*(import|export)\s+(type\s+)?[^'"]*?from\s+'([^']+)'/gm;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) out.push({ file, spec: m[3]!, typeOnly: m[2] !== undefined });
  const dyn = /import\(\s*'([^']+)'\s*\)/g;
  for (let m = dyn.exec(text); m !== null; m = dyn.exec(text)) out.push({ file, spec: m[1]!, typeOnly: false });
  return out;
}

const files = sourceFiles(SRC);
const edges = files.flatMap(importsOf).filter((e) => e.spec.startsWith('.'));

describe('core layering (STYLE.md rule 2)', () => {
  it('finds the source tree', () => {
    expect(files.length).toBeGreaterThan(30);
    expect(Object.keys(ALLOWED).sort()).toEqual(
      fs.readdirSync(SRC, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort(),
    );
  });

  it('imports only allowed folders, through their index.ts', () => {
    const bad: string[] = [];
    for (const e of edges) {
      const from = path.relative(SRC, e.file).split(path.sep);
      const target = path.relative(SRC, path.resolve(path.dirname(e.file), e.spec)).split(path.sep);
      if (from.length === 1) {
        // src/index.ts: the public entry may import api/ and util/ only, through files of api/.
        if (!['api', 'util'].includes(target[0]!)) bad.push(`${e.file}: ${e.spec}`);
        continue;
      }
      const [fromDir] = from;
      const [toDir] = target;
      if (fromDir === toDir) continue;
      if (toDir === 'api') bad.push(`${path.relative(SRC, e.file)} imports api/ (only src/index.ts may)`);
      else if (e.typeOnly && (toDir === 'config' || toDir === 'log')) continue;
      else if (ENTRY_POINTS[from.join('/')]?.includes(toDir!)) continue;
      else if (!ALLOWED[fromDir!]!.includes(toDir!)) bad.push(`${path.relative(SRC, e.file)} -> ${toDir}/ is not an allowed edge`);
      else if (target.length !== 2 || target[1] !== 'index.ts') bad.push(`${path.relative(SRC, e.file)} imports ${e.spec}: go through ${toDir}/index.ts`);
    }
    expect(bad).toEqual([]);
  });

  it('never imports transport-tcp or the launcher', () => {
    const bad = files.flatMap(importsOf).filter((e) => /@tsmpi\/(transport-tcp|launcher|bench)/.test(e.spec));
    expect(bad).toEqual([]);
  });
});
