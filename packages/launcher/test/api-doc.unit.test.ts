// docs/API.md is written by hand; this keeps it complete: every export of @tsmpi/core, every public member
// of its classes, every error class and every mpiexec option appears in it (in a code span), and it names
// nothing as an export that is not one.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as MPI from '@tsmpi/core';
import { knownFlags } from '../src/options.ts';
import { REPO } from './doc-files.ts';

const doc = fs.readFileSync(path.join(REPO, 'docs/API.md'), 'utf8');
/** Every identifier and every --flag that appears inside a code span or code block of API.md. */
const blocks = [...doc.matchAll(/^```.*\n([\s\S]*?)^```/gm)].map((m) => m[1]!);
const prose = doc.replace(/^```.*\n[\s\S]*?^```/gm, '');
const spans = [...blocks, ...[...prose.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!)].join('\n');
const words = new Set(spans.match(/-{1,2}[a-z][\w-]*|[A-Za-z_$][\w$]*/g));

/** Exports that exist only as types, so Object.keys cannot see them. */
const TYPE_EXPORTS = ['ThreadLevel', 'BufSpec', 'Config', 'Stats', 'DistGraphOptions', 'WBufSpec', 'RegisterClassOptions', 'KeyvalFns', 'ErrhandlerFn', 'ProfileHooks'];
const CLASSES = ['Comm', 'CartComm', 'GraphComm', 'DistGraphComm', 'Group', 'Request', 'Status', 'Message', 'Datatype', 'Op', 'Worker', 'MPIError', 'Info', 'Errhandler', 'Intercomm', 'File'] as const;
/** Members Node's or JavaScript's base classes bring (Worker extends node:worker_threads Worker). */
const INHERITED = new Set(['constructor', 'toString', 'toWire', 'fromWire', 'postMessage']);

function publicMembers(cls: (typeof CLASSES)[number]): string[] {
  const k = (MPI as unknown as Record<string, { prototype: object }>)[cls]!;
  const names = new Set<string>();
  for (let p: object | null = k.prototype; p !== null && p !== Object.prototype && p !== Error.prototype; p = Object.getPrototypeOf(p) as object | null) {
    if (cls === 'Worker' && p !== k.prototype) break;
    for (const n of Object.getOwnPropertyNames(p)) names.add(n);
  }
  for (const n of Object.getOwnPropertyNames(k)) if (!['length', 'name', 'prototype'].includes(n)) names.add(n);
  return [...names].filter((n) => !n.startsWith('_') && !INHERITED.has(n)).sort();
}

describe('docs/API.md covers the public surface', () => {
  it.each([...Object.keys(MPI), ...TYPE_EXPORTS])('documents the export %s', (name) => {
    expect(words.has(name), `docs/API.md does not mention \`${name}\``).toBe(true);
  });

  it.each(CLASSES.map((c) => [c, publicMembers(c)] as const))('documents every public member of %s', (cls, members) => {
    if (cls !== 'Worker' && cls !== 'MPIError') expect(members.length).toBeGreaterThan(0);
    expect(members.filter((m) => !words.has(m)), `members of ${cls} missing from docs/API.md`).toEqual([]);
  });

  it('documents the fields of MPIError', () => {
    const e = new MPI.MPIError(MPI.ERR_ARG, 'x', 'y');
    for (const field of Object.keys(e)) expect(words.has(field), field).toBe(true);
  });

  it.each(knownFlags())('documents the mpiexec option %s', (flag) => {
    expect(words.has(flag), `docs/API.md does not document ${flag}`).toBe(true);
  });

  it('names as MPI.X only what @tsmpi/core exports', () => {
    const named = new Set([...spans.matchAll(/\bMPI\.([A-Za-z_]\w*)/g)].map((m) => m[1]!));
    const exported = new Set(Object.keys(MPI));
    expect([...named].filter((n) => !exported.has(n))).toEqual([]);
  });
});
