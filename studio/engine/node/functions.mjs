// The function picker's listing of a TypeScript or JavaScript hook source, as ADF would see it:
// `node functions.mjs <path> [--module]` reads the file's text on stdin and prints one JSON line,
// {"functions": [{name, line, is_async, params}], "unchecked": [name], "open_ended": bool,
//  "problem": {message, line, column} | null}. `unchecked` names the bindings whose value may
// or may not be a function when the hook runs (a call's result, an import); `open_ended` says
// that names no parse can see may be there (`export * from`).
//
// With `--module` the file is read as the ES module a step or chain hook is (types stripped, no
// rewrite) and the listing is its exports, `default` included, by the name they export.
//
// ADF compiles the type-stripped, rewritten file as the body of an async function and calls any
// top-level binding that holds a function (spec/js-runtime.md §1). So the listing follows the
// same steps: strip types, apply the same import/export rewrite, let V8 compile the very script
// ADF would compile (its syntax error, if any, is the problem), and read the top-level bindings
// from acorn's syntax tree. Nothing in the file runs.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SourceMap, stripTypeScriptTypes } from 'node:module';
import vm from 'node:vm';

import * as acorn from 'acorn';

import { rewrite } from './rewrite.mjs';

const PREFIX = '(async () => {';
// Salvaging a broken file re-reads it once per blanked statement; both bounds keep a large file
// with many errors from holding up the picker.
const MAX_SALVAGE = 50;
const SALVAGE_MS = 250;

class Broken extends Error {
  constructor(message, line, column) {
    super(message);
    this.line = line;
    this.column = column;
  }
}

// Types are stripped in strip mode where it can be done, since that keeps every position; a
// file that needs transform mode (an enum, a namespace, parameter properties) is transformed
// as ADF does, and positions are mapped back through the source map.
function stripTypes(path, text) {
  if (!/\.m?ts$/.test(path)) return { code: text, map: null };
  try {
    return { code: stripTypeScriptTypes(text, { mode: 'strip' }), map: null };
  } catch {
    // Retried in transform mode, whose failure is the one ADF reports.
  }
  try {
    const out = stripTypeScriptTypes(text, { mode: 'transform', sourceMap: true });
    const at = out.lastIndexOf('\n//# sourceMappingURL=data:application/json;base64,');
    if (at < 0) return { code: out, map: null };
    const payload = JSON.parse(Buffer.from(out.slice(at).split('base64,')[1], 'base64').toString());
    return { code: out.slice(0, at), map: new SourceMap(payload) };
  } catch (err) {
    const where = stripErrorPosition(err);
    throw new Broken(String(err?.message ?? err), where.line, where.column);
  }
}

// A type-stripping error's stack starts "<file>:<line>", then the source line and a caret line.
function stripErrorPosition(err) {
  const lines = String(err?.stack ?? '').split('\n');
  const m = /:(\d+)$/.exec(lines[0] ?? '');
  const caret = lines.findIndex((l) => /^\s*\^+\s*$/.test(l));
  return { line: m ? Number(m[1]) : 1, column: caret > 0 ? lines[caret].indexOf('^') + 1 : null };
}

// 1-based line, 0-based column in the compiled code -> 1-based line and column in the file.
function original(map, line, column) {
  if (!map) return { line, column: column + 1 };
  const entry = map.findEntry(line - 1, column);
  if (entry && typeof entry.originalLine === 'number') {
    return { line: entry.originalLine + 1, column: entry.originalColumn + 1 };
  }
  return { line, column: column + 1 };
}

// V8 is the judge of whether ADF could compile the script: the same wrapping, compiled only.
function compileCheck(script, map) {
  try {
    new vm.Script(`${PREFIX}${script}\n})()`, { filename: 'hook' });
  } catch (err) {
    const m = /^hook:(\d+)/.exec(String(err?.stack ?? ''));
    const lines = String(err?.stack ?? '').split('\n');
    const caret = lines.findIndex((l) => /^\s*\^+\s*$/.test(l));
    const line = m ? Number(m[1]) : 1;
    let column = caret > 0 ? lines[caret].indexOf('^') : 0;
    if (line === 1) column = Math.max(0, column - PREFIX.length);
    const at = original(map, line, column);
    throw new Broken(String(err?.message ?? err), at.line, caret > 0 ? at.column : null);
  }
}

function parse(script, map) {
  try {
    return acorn.parse(script, {
      ecmaVersion: 'latest',
      sourceType: 'script',
      allowAwaitOutsideFunction: true,
      allowReturnOutsideFunction: true,
      allowHashBang: false,
      locations: true,
    });
  } catch (err) {
    const at = err?.loc ? original(map, err.loc.line, err.loc.column) : { line: 1, column: null };
    const message = String(err?.message ?? err).replace(/ \(\d+:\d+\)$/, '');
    throw new Broken(`the studio's parser cannot read this file: ${message}`, at.line, at.column);
  }
}

function params(node, code) {
  return node.params.map((p) => param(p, code));
}

function param(p, code) {
  if (p.type === 'Identifier') return p.name;
  if (p.type === 'AssignmentPattern') return `${param(p.left, code)}=...`;
  if (p.type === 'RestElement') return `...${param(p.argument, code)}`;
  const text = code.slice(p.start, p.end).replace(/\s+/g, ' ');
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

const isFunction = (node) =>
  node?.type === 'FunctionExpression' || node?.type === 'ArrowFunctionExpression';

// The bindings the trailer can reach: top-level function declarations, and top-level
// variables (or plain assignments) whose value is a function or arrow expression. A class is a
// function to `typeof`, but calling one without `new` throws, so a class name is no choice.
function collect(program, code, map) {
  const bound = new Map();
  const set = (name, value) => {
    bound.delete(name);
    bound.set(name, value);
  };
  const found = (name, fn, at) => ({
    name,
    line: original(map, at.loc.start.line, at.loc.start.column).line,
    is_async: Boolean(fn.async),
    params: params(fn, code),
  });
  for (const node of program.body) {
    if (node.type === 'FunctionDeclaration' && node.id) {
      set(node.id.name, found(node.id.name, node, node));
    } else if (node.type === 'ClassDeclaration' && node.id) {
      set(node.id.name, CLASS);
    } else if (node.type === 'VariableDeclaration') {
      for (const d of node.declarations) {
        if (d.id.type !== 'Identifier') continue;
        if (isFunction(d.init)) set(d.id.name, found(d.id.name, d.init, d));
        else if (d.init || node.kind !== 'var') set(d.id.name, null);
      }
    } else if (
      node.type === 'ExpressionStatement' &&
      node.expression.type === 'AssignmentExpression' &&
      node.expression.operator === '=' &&
      node.expression.left.type === 'Identifier'
    ) {
      const { left, right } = node.expression;
      set(left.name, isFunction(right) ? found(left.name, right, node) : null);
    }
  }
  // Function declarations are hoisted, so a later declaration of a name wins over an earlier
  // one; what is left is listed in file order.
  return listing(bound, false);
}

// `bound` maps a name to its function's entry, null when the value shows only at run time, or
// CLASS (never callable without `new`, so no choice and no doubt).
const CLASS = Symbol('class');

function listing(bound, openEnded) {
  const functions = [...bound.values()].filter((v) => v && v !== CLASS);
  functions.sort((a, b) => a.line - b.line);
  const unchecked = [...bound].filter(([, v]) => v === null).map(([name]) => name);
  return { functions, unchecked, open_ended: openEnded };
}

// The exports of an ES module, each under the name it is exported as.
function collectModule(program, code, map) {
  const found = (name, fn, at) => ({
    name,
    line: original(map, at.loc.start.line, at.loc.start.column).line,
    is_async: Boolean(fn.async),
    params: params(fn, code),
  });
  const local = new Map();
  const declare = (node) => {
    if (!node) return [];
    if (node.type === 'FunctionDeclaration' && node.id) {
      local.set(node.id.name, found(node.id.name, node, node));
      return [node.id.name];
    }
    if (node.type === 'ClassDeclaration' && node.id) {
      local.set(node.id.name, CLASS);
      return [node.id.name];
    }
    if (node.type === 'VariableDeclaration') {
      const names = [];
      for (const d of node.declarations) {
        if (d.id.type !== 'Identifier') continue;
        local.set(d.id.name, isFunction(d.init) ? found(d.id.name, d.init, d) : null);
        names.push(d.id.name);
      }
      return names;
    }
    if (node.type === 'ImportDeclaration') {
      for (const spec of node.specifiers) local.set(spec.local.name, null);
    }
    return [];
  };
  const declared = new Map();
  for (const node of program.body) {
    const inner = node.type === 'ExportNamedDeclaration' ? node.declaration : node;
    declared.set(node, declare(inner));
  }
  const exported = new Map();
  let openEnded = false;
  const as = (entry, name) => (entry && entry !== CLASS ? { ...entry, name } : entry);
  const nameOf = (n) => (n.type === 'Literal' ? String(n.value) : n.name);
  for (const node of program.body) {
    if (node.type === 'ExportNamedDeclaration') {
      for (const name of node.declaration ? declared.get(node) : []) {
        exported.set(name, local.get(name) ?? null);
      }
      for (const spec of node.specifiers ?? []) {
        const name = nameOf(spec.exported);
        exported.set(name, node.source ? null : as(local.get(nameOf(spec.local)) ?? null, name));
      }
    } else if (node.type === 'ExportDefaultDeclaration') {
      const d = node.declaration;
      if (d.type === 'FunctionDeclaration' || isFunction(d)) {
        exported.set('default', found('default', d, node));
        if (d.id) local.set(d.id.name, found(d.id.name, d, node));
      } else if (d.type === 'ClassDeclaration' || d.type === 'ClassExpression') {
        exported.set('default', CLASS);
      } else if (d.type === 'Identifier') {
        exported.set('default', as(local.get(d.name) ?? null, 'default'));
      } else {
        exported.set('default', null);
      }
    } else if (node.type === 'ExportAllDeclaration') {
      if (node.exported) exported.set(nameOf(node.exported), null);
      else openEnded = true;
    }
  }
  return listing(exported, openEnded);
}

function parseModule(code, map) {
  try {
    return acorn.parse(code, { ecmaVersion: 'latest', sourceType: 'module', locations: true });
  } catch (err) {
    const at = err?.loc ? original(map, err.loc.line, err.loc.column) : { line: 1, column: null };
    const message = String(err?.message ?? err).replace(/ \(\d+:\d+\)$/, '');
    throw new Broken(message, at.line, at.column);
  }
}

function list(path, text, asModule) {
  const { code, map } = stripTypes(path, text);
  if (asModule) return collectModule(parseModule(code, map), code, map);
  const script = rewrite(code);
  compileCheck(script, map);
  return collect(parse(script, map), script, map);
}

// A broken file still lists what can be read: the top-level statement around the error is
// blanked out (line breaks kept, so every position stays) and the rest is tried again.
const TOP_LEVEL_START = /^[^\s)\]}]/;

function salvage(path, text, first, asModule) {
  const lines = text.split('\n');
  let broken = first;
  const deadline = Date.now() + SALVAGE_MS;
  for (let tries = 0; tries < MAX_SALVAGE && Date.now() < deadline; tries++) {
    const bad = Math.min(Math.max(broken.line - 1, 0), lines.length - 1);
    const starts = lines.map((l, i) => (TOP_LEVEL_START.test(l) ? i : -1)).filter((i) => i >= 0);
    const head = Math.max(0, ...starts.filter((i) => i <= bad));
    const tail = Math.min(lines.length, ...starts.filter((i) => i > bad));
    if (lines.slice(head, tail).every((l) => l === '')) return NOTHING;
    for (let i = head; i < tail; i++) lines[i] = '';
    try {
      return list(path, lines.join('\n'), asModule);
    } catch (err) {
      if (!(err instanceof Broken)) return NOTHING;
      broken = err;
    }
  }
  return NOTHING;
}

const NOTHING = { functions: [], unchecked: [], open_ended: false };

function main() {
  const path = process.argv[2];
  const asModule = process.argv.includes('--module');
  const text = readFileSync(0, 'utf8');
  try {
    return { ...list(path, text, asModule), problem: null };
  } catch (err) {
    if (!(err instanceof Broken)) throw err;
    const problem = { message: err.message, line: err.line, column: err.column };
    return { ...salvage(path, text, err, asModule), problem };
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.stdout.write(`${JSON.stringify(main())}\n`);
}
