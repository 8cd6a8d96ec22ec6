#!/usr/bin/env node
// Keeps ARCHITECTURE.md's "Module map" true to the code: the "uses" column of each module is the
// set of other modules its files import (src/modules/<m>/**, tests excluded), read from the source;
// the "owns" column is prose and stays as written. Also measures the module graph's depth (the
// longest chain of module → module imports). `npm run docs:modules` rewrites the table; a test
// fails while it is out of date.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const HEADER = '| module | owns | uses |';

/** module → the other modules it imports, from the import specifiers of its files. */
export function moduleGraph(root = ROOT) {
  const dir = join(root, 'src', 'modules');
  const modules = readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
  const graph = new Map(modules.map((m) => [m, new Set()]));
  for (const m of modules) {
    const files = readdirSync(join(dir, m), { recursive: true, withFileTypes: true }).filter(
      (e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts'),
    );
    for (const f of files) {
      const path = join(f.parentPath, f.name);
      for (const [, spec] of readFileSync(path, 'utf8').matchAll(/\bfrom\s+'(\.[^']+)'/g)) {
        const target = relative(dir, join(dirname(path), spec)).split('/')[0];
        if (target !== m && graph.has(target)) graph.get(m).add(target);
      }
    }
  }
  return graph;
}

/** The longest chain of module → module imports (edges counted), and one such chain. */
export function longestChain(graph) {
  const memo = new Map();
  const walk = (m, onPath) => {
    if (memo.has(m)) return memo.get(m);
    let best = [m];
    for (const next of graph.get(m) ?? []) {
      if (onPath.has(next)) continue; // a cycle between modules: counted once
      const chain = walk(next, new Set([...onPath, next]));
      if (chain.length + 1 > best.length) best = [m, ...chain];
    }
    memo.set(m, best);
    return best;
  };
  let longest = [];
  for (const m of graph.keys()) {
    const chain = walk(m, new Set([m]));
    if (chain.length > longest.length) longest = chain;
  }
  return { depth: longest.length - 1, chain: longest };
}

/** ARCHITECTURE.md's text with the module map's rows regenerated (one row per module). */
export function withModuleMap(text, graph = moduleGraph()) {
  const lines = text.split('\n');
  const start = lines.indexOf(HEADER);
  if (start < 0) throw new Error(`ARCHITECTURE.md has no "${HEADER}" table`);
  let end = start + 2;
  while (end < lines.length && lines[end].startsWith('|')) end++;
  const owns = new Map();
  const order = [];
  for (const row of lines.slice(start + 2, end)) {
    const [, names, what] = row.split(/\s*\|\s*/);
    for (const name of names.split(/,\s*/)) {
      owns.set(name, what);
      order.push(name);
    }
  }
  const names = [...order.filter((m) => graph.has(m)), ...[...graph.keys()].filter((m) => !order.includes(m))];
  const rows = names.map((m) => {
    const uses = [...graph.get(m)].sort();
    return `| ${m} | ${owns.get(m) ?? '—'} | ${uses.length ? uses.join(', ') : '—'} |`;
  });
  return [...lines.slice(0, start + 2), ...rows, ...lines.slice(end)].join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const file = join(ROOT, 'ARCHITECTURE.md');
  const graph = moduleGraph();
  writeFileSync(file, withModuleMap(readFileSync(file, 'utf8'), graph));
  const { depth, chain } = longestChain(graph);
  console.log(`module map written; module graph depth ${depth}: ${chain.join(' → ')}`);
}
