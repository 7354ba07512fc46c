// The studio's stand-in for `@use-crux/core`, which is not published: the factories a
// step-preparation hook imports return plain identity objects, the same handles the studio's
// Python hooks use, so the studio can match what a hook passes back by id. Each factory returns
// the same frozen object for the same identity, as a hook holding one object expects.
//
// A resource handle keeps its `identity` ("working-state:<id>", "blackboard:<id>",
// "memory:<memoryId>:<blockId>") as a non-enumerable property, so that the handle reads the
// resource while the object a hook returns carries only contributor fields.

import { made as madeHere } from './crux_handles.mjs';

const made = new Map();

function handle(identity, fields) {
  let found = made.get(identity);
  if (found === undefined) {
    found = Object.freeze(Object.defineProperty({ ...fields }, 'identity', { value: identity }));
    made.set(identity, found);
    madeHere.add(found);
  }
  return found;
}

function needId(name, value) {
  if (typeof value !== 'string' || value === '') {
    throw new TypeError(`${name}() needs a non-empty string id`);
  }
  return value;
}

export function workingState(id) {
  needId('workingState', id);
  return handle(`working-state:${id}`, { id, kind: 'working-state' });
}

export function blackboard(id) {
  needId('blackboard', id);
  return handle(`blackboard:${id}`, { id, kind: 'blackboard' });
}

// memory(id) is the memory contributor; memory(memoryId, blockId) one of its blocks, readable.
export function memory(id, blockId) {
  needId('memory', id);
  if (blockId === undefined) return handle(`memory:${id}`, { id, kind: 'memory' });
  needId('memory', blockId);
  return handle(`memory:${id}:${blockId}`, { id: blockId, kind: 'memory-block', memoryId: id });
}

export function prompt(id) {
  needId('prompt', id);
  return handle(`prompt:${id}`, { id, kind: 'context' });
}

export function agent(id) {
  needId('agent', id);
  return handle(`agent:${id}`, { id, kind: 'agent' });
}

export const RESOURCE_READ_REASONS = Object.freeze([
  'undeclared',
  'unresolved',
  'storage-unavailable',
  'unauthorized',
]);
export const PREPARATION_REASONS = Object.freeze(['callback', 'timeout', 'aborted']);

export class ResourceReadError extends Error {
  constructor(reason, identity) {
    if (!RESOURCE_READ_REASONS.includes(reason)) {
      throw new TypeError(`a resource read fails with one of ${RESOURCE_READ_REASONS.join(', ')}`);
    }
    super(`Preparation resource read failed: ${reason}.`);
    this.name = 'ResourceReadError';
    this.reason = reason;
    this.identity = identity ?? null;
  }
}

export class PreparationError extends Error {
  constructor(reason) {
    if (!PREPARATION_REASONS.includes(reason)) {
      throw new TypeError(`preparation fails with one of ${PREPARATION_REASONS.join(', ')}`);
    }
    super(`Request preparation failed: ${reason}.`);
    this.name = 'PreparationError';
    this.reason = reason;
  }
}
