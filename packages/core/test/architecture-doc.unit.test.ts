// docs/ARCHITECTURE.md stays true to the code it draws: every `Class.method` it names (in its text and
// its Mermaid diagrams) exists in that class's source, and each paper's row names a file whose opening
// comment cites that paper (the place a newcomer is sent to read the paper's section and invariants).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const doc = fs.readFileSync(path.join(REPO, 'docs/ARCHITECTURE.md'), 'utf8');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = path.join(dir, d.name);
    if (d.isDirectory()) return d.name === 'node_modules' || d.name === 'dist' ? [] : sourceFiles(p);
    return d.name.endsWith('.ts') && !d.name.includes('.test') ? [p] : [];
  });
}

/** class name -> the text of the file that declares it, over the packages' sources. */
const classes = new Map<string, string>();
for (const pkg of fs.readdirSync(path.join(REPO, 'packages'))) {
  const src = path.join(REPO, 'packages', pkg, 'src');
  if (!fs.existsSync(src)) continue;
  for (const f of sourceFiles(src)) {
    const text = fs.readFileSync(f, 'utf8');
    for (const m of text.matchAll(/^export (?:abstract )?class (\w+)/gm)) classes.set(m[1]!, text);
  }
}

/** `Class.member` and `Class.#member` names in the document whose class is one of the sources' classes. */
const members = [...new Set([...doc.matchAll(/\b([A-Z]\w+)\.(#?[a-zA-Z_]\w*)/g)].map((m) => `${m[1]}.${m[2]}`))]
  .filter((name) => classes.has(name.split('.')[0]!));

describe('docs/ARCHITECTURE.md names what the code has', () => {
  it('draws the message path in Mermaid, through the functions that carry it', () => {
    expect(doc).toMatch(/```mermaid\n/);
    for (const step of [
      'Pt2ptComm.Isend', 'Device.sendBytes', 'HostedPath.queueEager', 'Device.send', 'HostedPath.first', 'FrameParser.feed', 'LaneMatcher.eagerArrived',
      'DeviceWiring.#onDeliver', 'QueueMatcher.arriveFrame', 'Protocol.arrive', 'MatchQueues.arrive', 'Device.recvBytes', 'selectSendPath', 'selectMatcher',
    ]) {
      expect(doc).toContain(step);
    }
    expect(members.length).toBeGreaterThan(20);
  });

  it.each(members)('%s exists', (name) => {
    const [cls, member] = name.split('.') as [string, string];
    const text = classes.get(cls)!;
    const m = member.replace(/^#/, '\\#');
    // a method, a field or arrow function, a getter, or a static
    expect(text).toMatch(new RegExp(`^\\s+(?:static |readonly |async |get |private )*${m}\\s*(?:[(<=:]|\\?\\()`, 'm'));
  });

  it('each paper row names a file whose opening comment cites that paper', () => {
    const section = doc.slice(doc.indexOf("## Where each paper's algorithm lives"));
    const table = section.slice(0, section.indexOf('\n## ')).split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| paper'));
    const refs = fs.readFileSync(path.join(REPO, 'docs/REFERENCES.md'), 'utf8');
    const listed = new Set([...refs.matchAll(/^\| `(papers\/[\w-]+\.txt)`/gm)].map((m) => m[1]!));
    const covered = new Set<string>();
    let paper = '';
    for (const row of table) {
      paper = /`(papers\/[\w-]+\.txt)`/.exec(row)?.[1] ?? paper;
      const file = /`(packages\/[\w./-]+\.ts)`/.exec(row)?.[1];
      expect(file, row).toBeDefined();
      const text = fs.readFileSync(path.join(REPO, file!), 'utf8');
      // The opening comment, its line breaks joined (a name may be split across lines).
      const opening = text.slice(0, text.indexOf('*/')).replace(/\n\s*\*\s?/g, '');
      expect(opening, `${file} should open by citing ${paper}`).toContain(paper);
      covered.add(paper);
    }
    expect([...covered].sort()).toEqual([...listed].sort());
  });
});
