// Pre-LLM hooks in TypeScript for the node runtime's tests: each follows one rule of
// spec/js-runtime.md §1, or misbehaves in one way.

import { createHash as sha } from 'crypto';
import * as pathModule from 'path';
import util from 'util';

type Payload = { request: Record<string, any>; loop: { name: string } };

enum Level {
  Low = 1,
  High,
}

namespace Labels {
  export const prefix = 'level';
}

class Tagger {
  constructor(private readonly tag: string) {}
  mark(text: string): string {
    return `${text} [${this.tag}]`;
  }
}

let calls = 0;

export function main({ request }: Payload) {
  return { ...request, system: `${Labels.prefix} ${Level.High}` };
}

export const transform = async (payload: Payload): Promise<object> => {
  const tools = payload.request.tools.filter((t: { name: string }) => t.name !== 'shell');
  return { ...payload.request, tools, system: new Tagger('ts').mark(payload.loop.name) };
};

export function imports({ request }: Payload) {
  const digest = sha('sha256').update('x').digest('hex').slice(0, 8);
  return { ...request, system: [digest, pathModule.basename('/a/b.txt'), util.format('%d', 7)].join(' ') };
}

export function counter({ request }: Payload) {
  calls += 1;
  (globalThis as any).seen = ((globalThis as any).seen ?? 0) + 1;
  return { ...request, system: `${calls} ${(globalThis as any).seen}` };
}

export function sandbox({ request }: Payload) {
  const absent = ['fetch', 'Request', 'Response', 'Headers', 'performance', 'AbortController', 'setImmediate', 'crypto']
    .filter((name) => typeof (globalThis as any)[name] === 'undefined');
  const refused: string[] = [];
  for (const attempt of [() => eval('1 + 1'), () => new Function('return 1')()]) {
    try {
      attempt();
    } catch (err) {
      refused.push((err as Error).name);
    }
  }
  let frozen = false;
  try {
    (Object.prototype as any).polluted = true;
  } catch {
    frozen = true;
  }
  return {
    ...request,
    system: JSON.stringify({
      absent,
      refused,
      frozen,
      env: process.env,
      cwd: process.cwd(),
      polluted: ({} as any).polluted ?? null,
    }),
  };
}

export function noisy({ request }: Payload) {
  console.log('plain', 1, { a: [1] });
  console.info('info line');
  console.warn('careful');
  console.error('broken');
  process.stdout.write('raw out\n');
  process.stderr.write('raw err\n');
  return request;
}

export function usesRequire() {
  return require('fs');
}

export async function relativeImport() {
  return await __require('./util');
}

export async function forbiddenModule() {
  return await __require('os');
}

export async function dynamicImport() {
  return await import('crypto');
}

export async function callsAdf() {
  return await (adf as any).fs_read({ path: 'a' });
}

export function returnsText({ request }: Payload) {
  return JSON.stringify({ ...request, system: 'from text' });
}

export function returnsUndefined() {
  return undefined;
}

export function returnsCycle({ request }: Payload) {
  const cycle: any = { ...request };
  cycle.self = cycle;
  return cycle;
}

export function returnsBigInt({ request }: Payload) {
  return { ...request, system: 10n };
}

export function failsAtRuntime(payload: Payload) {
  const missing: any = (payload as any).nothing;
  return missing.field;
}

export function throwsNull() {
  throw null;
}

export function exits() {
  process.exit(3);
}

export async function rejectsUnhandled({ request }: Payload) {
  Promise.reject(new Error('nobody waits for this'));
  await new Promise((resolve) => setTimeout(resolve, 50));
  return request;
}

export function spins() {
  while (true) {}
}

export function neverResolves() {
  return new Promise(() => {});
}

export function memoryBomb() {
  const kept: number[][] = [];
  while (true) kept.push(new Array(1_000_000).fill(1));
}

export function printsForever() {
  const line = 'x'.repeat(1 << 16);
  while (true) console.log(line);
}

export function echoesInput({ request }: Payload) {
  return request;
}
